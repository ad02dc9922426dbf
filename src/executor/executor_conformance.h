// The executor conformance suite: what every Executor (executor.h) must do, run against each
// implementation — LocalExecutor with real /bin/sh replicas, SlurmExecutor over a simulated Slurm
// (FakeSlurmClient), FakeExecutor with simulated replicas. An implementation's test only provides
// a harness factory:
//   INSTANTIATE_TEST_SUITE_P(Local, ExecutorConformanceTest,
//       ::testing::Values([](const std::filesystem::path& dir) { return std::make_unique<H>(dir);
//       }));
//
// The suite describes replicas by behaviour (ReplicaPlan); the harness turns a plan into a command
// its world runs, and moves its world on in Step(): one monitor pass of the executor (PollOnce),
// after a fake clock tick or, with real replicas, after waiting for one of them to end. Scenarios:
// submit -> running -> succeeded with logs and cursors, a failing replica with retries and with its
// budget spent, a configuration error (exit 78: no restart, its stderr reason in the message), a
// gang restart, the restart backoff (restarts wait for it; a cancel during it ends the gang at
// once), cancel while queued and while running, timeout, unknown ids, re-adoption by a new
// executor (a server restart) of a running and of an ended gang, and the same machine specs
// accepted or refused (the machine catalog's rules).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "executor/process_ops.h"

namespace trainyard::executor {

// How one replica behaves, per attempt (attempts past the list repeat its last entry).
struct ReplicaPlan {
  static constexpr int kUntilStopped = -1;  // runs until SIGTERM (then exits 143)
  std::string print;                        // a line it prints to stdout first; empty = none
  std::vector<int> attempts = {0};          // exit code of attempt 1, 2, ...; or kUntilStopped
  std::string error;                        // a line it prints to stderr next; empty = none
};

// The plan as a command line "conformance-replica print=TEXT attempts=3,0 error=TEXT" (for
// simulated worlds), and back; nullopt when `argv` is not such a command.
std::vector<std::string> EncodeReplicaPlan(const ReplicaPlan& plan);
std::optional<ReplicaPlan> DecodeReplicaPlan(const std::vector<std::string>& argv);
// What attempt `attempt` (from 1) of `plan` does: its exit code, or kUntilStopped.
int PlannedExit(const ReplicaPlan& plan, int attempt);

// A fake clock for harnesses that move time themselves: one second per Advance(). Thread-safe.
class SteppedClock : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override;
  void Advance();

 private:
  mutable std::mutex mu_;
  std::chrono::system_clock::time_point now_{std::chrono::seconds(1800000000)};
};

class ExecutorHarness {
 public:
  virtual ~ExecutorHarness() = default;
  // A new executor over the harness's data dir, in a world with 8 GPUs of any model (so that
  // only the machine catalog decides which GPU specs are accepted). Called again after the
  // previous one was shut down: a server restart (replicas, files and the outside world survive
  // it).
  virtual std::unique_ptr<Executor> Make() = 0;
  // The argv of a replica that behaves as `plan` says.
  virtual std::vector<std::string> Command(const ReplicaPlan& plan) = 0;
  // Lets the world move on a little (the suite calls it while waiting for a state): at least one
  // pass of the executor's monitor, never a fixed sleep. A harness with real processes may wait
  // for them (e.g. LocalExecutor::WaitForWork), with a bound.
  virtual void Step() = 0;
  // The time of the executor's clock now.
  virtual std::chrono::system_clock::time_point Now() = 0;
};

using ExecutorHarnessFactory =
    std::function<std::unique_ptr<ExecutorHarness>(const std::filesystem::path& dir)>;

class ExecutorConformanceTest : public ::testing::TestWithParam<ExecutorHarnessFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A gang of one replica per plan: the first in pool 0, the others in pool 1. kill_grace 1s, no
  // timeout, max_restarts 0; job dir under the test dir.
  GangSpec Spec(const std::string& id, const std::vector<ReplicaPlan>& plans);
  // Steps the world until `pred` holds for Get(id) (at most ~600 steps); the last status.
  GangStatus WaitFor(const std::string& id, const std::function<bool(const GangStatus&)>& pred);
  GangStatus WaitDone(const std::string& id);
  // Shuts the executor down and makes a new one (a server restart).
  void Restart();
  // The replicas' own log lines (not the executor's "[trainyard] ..." notes) after `after`, as
  // "P-R text" joined by " | ".
  std::string UserLogs(const std::string& id, int64_t after = -1);
  // "STATE FAILURE message" of a status.
  static std::string Outcome(const GangStatus& s);

  std::filesystem::path dir_;
  std::unique_ptr<ExecutorHarness> harness_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace trainyard::executor
