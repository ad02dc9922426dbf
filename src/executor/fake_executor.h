// FakeExecutor: an in-memory Executor that runs nothing (STYLE.md §2, §3).
//
// Tests drive it: every submitted gang waits in kQueued until the test calls Advance(); log lines,
// replica exit codes, Validate/Submit/Adopt failures and the outcome of Adopt after a "restart"
// are all injectable. With AutoRunOptions it instead walks each gang through
// QUEUED -> PENDING -> RUNNING -> SUCCEEDED on its own thread (used by `trainyard server
// --executor fake` to exercise and benchmark the control plane without processes).
//
// Listener callbacks are made after the fake's lock is released: synchronously on the calling
// thread for test-driven changes (Advance, Cancel, AppendLog does not notify), on the auto-run
// thread otherwise. All methods are thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "executor/executor.h"

namespace trainyard::executor {

struct AutoRunOptions {
  std::chrono::milliseconds pending_for{0};  // time in PENDING
  std::chrono::milliseconds running_for{0};  // time in RUNNING before SUCCEEDED
};

class FakeExecutor : public Executor {
 public:
  FakeExecutor() = default;
  explicit FakeExecutor(AutoRunOptions auto_run);
  ~FakeExecutor() override;

  // Executor.
  void SetListener(Listener listener) override;
  Status Validate(const GangSpec& spec) const override;
  Status Submit(const GangSpec& spec) override;
  StatusOr<GangStatus> Adopt(const GangSpec& spec) override;
  Status Cancel(const std::string& job_id) override;
  StatusOr<GangStatus> Get(const std::string& job_id) const override;
  StatusOr<std::vector<LogLine>> ReadLogs(const std::string& job_id, int64_t after,
                                          int limit) const override;
  void Shutdown() override;

  // --- Test controls. ---
  // Machine types Validate accepts (empty = any). Unknown ones give INVALID_ARGUMENT naming the
  // pool like the real catalog: "workerPoolSpecs[1].machineSpec.machineType: unknown ...".
  void SetKnownMachineTypes(std::set<std::string> names);
  // The next Validate/Submit calls return `status` (OK clears).
  void SetValidateError(Status status);
  void SetSubmitError(Status status);
  // What Adopt returns for `job_id`: the given state (as if processes were found, or not), or an
  // error. Without an entry Adopt reports kFailed "replicas not found after restart".
  void SetAdoptResult(const std::string& job_id, StatusOr<GangState> result);
  // When true, Cancel of a running gang stops at kCancelling until Advance(kCancelled).
  void SetHoldCancel(bool hold);
  // Called at the start of every Submit, on the caller's thread and without the fake's lock held
  // (so it may call back into the fake or into whoever submits): lets a test make something
  // happen "while the job is being submitted". Empty = none.
  void SetBeforeSubmitHook(std::function<void(const GangSpec&)> hook);

  // Moves a gang to `state` and notifies the listener. Sets start/end times like a real executor;
  // `error_message` is kept for kFailed/kCancelled. FAILED_PRECONDITION if the gang is terminal,
  // NOT_FOUND if unknown.
  Status Advance(const std::string& job_id, GangState state, std::string error_message = "");
  // Records a replica's exit code and restart count (shown in the next notification).
  Status SetReplicaResult(const std::string& job_id, int pool, int replica, int exit_code,
                          int restarts);
  // Appends one captured log line.
  Status AppendLog(const std::string& job_id, int pool, int replica, std::string text,
                   bool is_stderr = false);

  // Specs in submission order (Submit and Adopt), and cancel requests in order.
  std::vector<GangSpec> submitted() const;
  std::vector<std::string> cancelled() const;
  bool has_listener() const;

 private:
  struct Gang {
    GangSpec spec;
    GangStatus status;
    std::vector<LogLine> logs;
  };
  void Notify(const GangStatus& status);
  Status AdvanceLocked(Gang& gang, GangState state, std::string error_message);
  void AutoRunLoop();

  mutable std::mutex mu_;
  Listener listener_;
  std::map<std::string, Gang> gangs_;
  std::vector<GangSpec> submitted_;
  std::vector<std::string> cancelled_;
  std::set<std::string> known_machine_types_;
  Status validate_error_;
  Status submit_error_;
  std::map<std::string, StatusOr<GangState>> adopt_results_;
  bool hold_cancel_ = false;
  std::function<void(const GangSpec&)> before_submit_;
  int64_t next_log_offset_ = 0;

  std::optional<AutoRunOptions> auto_run_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::string>> auto_queue_;
  std::condition_variable auto_cv_;
  bool stopping_ = false;
  std::thread auto_thread_;
};

}  // namespace trainyard::executor
