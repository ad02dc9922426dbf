// FakeExecutor: an in-memory Executor that runs nothing (STYLE.md §2, §3).
//
// Tests drive it: every submitted gang waits in kQueued until the test calls Advance(); log lines,
// replica exit codes, Validate/Submit/Adopt failures and the outcome of Adopt after a "restart"
// are all injectable. With AutoRunOptions it instead walks each gang through
// QUEUED -> PENDING -> RUNNING -> SUCCEEDED on its own thread (used by `trainyard server
// --executor fake` to exercise and benchmark the control plane without processes). With a
// replica program (SetReplicaProgram) it simulates replicas instead: Step() starts them, and
// their exits, restarts, timeouts and stops go through the same GangLifecycle as the real
// executors' (the executor conformance suite runs it that way).
//
// Every state change goes through the gang's GangLifecycle (gang_lifecycle.h), so terminal states
// are final and failures carry their GangFailure; Advance() forces a state through it.
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
#include "executor/gang_lifecycle.h"
#include "executor/process_ops.h"

namespace trainyard::executor {

// What one attempt of a simulated replica does: prints `output` on stdout, then `errors` on
// stderr, then exits with `exit_code`, or (nullopt) runs until it is stopped, then exits 143 as
// if SIGTERM killed it.
struct FakeReplicaRun {
  std::vector<std::string> output;
  std::optional<int> exit_code;
  std::vector<std::string> errors;
};
// `attempt` counts from 1 across restarts of that replica.
using FakeReplicaProgram = std::function<FakeReplicaRun(const ReplicaSpec& replica, int attempt)>;

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
  std::vector<std::string> AdmissionNotes(const GangSpec& spec) const override;
  Status Submit(const GangSpec& spec) override;
  StatusOr<GangStatus> Adopt(const GangSpec& spec) override;
  Status Cancel(const std::string& job_id) override;
  StatusOr<GangStatus> Get(const std::string& job_id) const override;
  StatusOr<std::vector<LogLine>> ReadLogs(const std::string& job_id, int64_t after,
                                          int limit) const override;
  void Shutdown() override;

  // --- Test controls. ---
  // The next Validate/Submit calls return `status` (OK clears).
  void SetValidateError(Status status);
  void SetSubmitError(Status status);
  // What AdmissionNotes returns for every gang (none by default).
  void SetAdmissionNotes(std::vector<std::string> notes);
  // What Adopt returns for `job_id`: the given state (as if processes were found, or not), or an
  // error. Without an entry Adopt reports kFailed "replicas not found after restart".
  void SetAdoptResult(const std::string& job_id, StatusOr<GangState> result);
  // The log lines Adopt finds for `job_id` (what a real executor reads back from the job dir).
  void SetAdoptLogs(const std::string& job_id, std::vector<LogLine> lines);
  // When true, Cancel of a running gang stops at kCancelling until Advance(kCancelled).
  void SetHoldCancel(bool hold);
  // Called at the start of every Submit, on the caller's thread and without the fake's lock held
  // (so it may call back into the fake or into whoever submits): lets a test make something
  // happen "while the job is being submitted". Empty = none.
  void SetBeforeSubmitHook(std::function<void(const GangSpec&)> hook);

  // Moves a gang to `state` (through its GangLifecycle) and notifies the listener. Sets
  // start/end times like a real executor; `error_message` and `failure` are kept for
  // kFailed/kCancelled. FAILED_PRECONDITION if the gang is terminal, NOT_FOUND if unknown.
  Status Advance(const std::string& job_id, GangState state, std::string error_message = "",
                 GangFailure failure = GangFailure::kReplicaFailed);

  // Simulated replicas (see the header comment): gangs submitted after this run `program`.
  void SetReplicaProgram(FakeReplicaProgram program);
  // Time for start/end times and timeouts; nullptr (default) = Clock::Real(). Not owned.
  void SetClock(Clock* clock);
  // The wait before simulated replicas restart (gang_lifecycle.h; default 1s doubling to 5 min).
  void SetRestartBackoff(RestartBackoff backoff);
  // One step of every simulated gang: QUEUED -> PENDING -> RUNNING (replicas start), restarts
  // whose backoff is over started, replica exits handled (restart, success, failure), then the
  // lifecycle's timeout / stop checks.
  // Notifies the listener of every change.
  void Step();
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
  struct SimReplica {
    int attempt = 0;                              // started attempts
    bool running = false;                         // started, not ended
    bool handled = true;                          // its last end was reported to the lifecycle
    std::optional<int> code;                      // how its last attempt ended
    std::chrono::system_clock::time_point ended;  // when, if it did
  };
  struct Gang {
    GangSpec spec;
    GangRecord record;
    std::vector<ReplicaStatus> replicas;
    bool simulated = false;
    std::vector<SimReplica> sim;  // when simulated, GangSpec order
    std::vector<LogLine> logs;
  };
  static GangStatus StatusOf(const Gang& gang);
  void Notify(const GangStatus& status);
  Status AdvanceLocked(Gang& gang, GangState state, std::string error_message,
                       GangFailure failure = GangFailure::kReplicaFailed);
  // Simulation (mu_ held): start a replica attempt, report ended replicas, perform an action.
  void StartReplica(Gang& gang, size_t i);
  // Replica i (all of them when i is npos) waits for its restart until `due`, or starts now.
  void ScheduleRestart(Gang& gang, size_t i, std::chrono::system_clock::time_point due);
  void StartDueRestarts(Gang& gang);
  void HandleExits(Gang& gang);
  void Perform(Gang& gang, const LifecycleAction& action, size_t replica);
  GangLifecycle Lifecycle(Gang& gang) const;
  std::chrono::system_clock::time_point Now() const;
  void AutoRunLoop();

  mutable std::mutex mu_;
  Listener listener_;
  std::map<std::string, Gang> gangs_;
  std::vector<GangSpec> submitted_;
  std::vector<std::string> cancelled_;
  Status validate_error_;
  std::vector<std::string> admission_notes_;
  Status submit_error_;
  std::map<std::string, StatusOr<GangState>> adopt_results_;
  std::map<std::string, std::vector<LogLine>> adopt_logs_;
  bool hold_cancel_ = false;
  std::function<void(const GangSpec&)> before_submit_;
  FakeReplicaProgram program_;
  Clock* clock_ = nullptr;
  RestartBackoff backoff_;
  int64_t next_log_offset_ = 0;

  std::optional<AutoRunOptions> auto_run_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::string>> auto_queue_;
  std::condition_variable auto_cv_;
  bool stopping_ = false;
  std::thread auto_thread_;
};

}  // namespace trainyard::executor
