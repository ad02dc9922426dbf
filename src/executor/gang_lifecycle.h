// GangLifecycle: the one state machine of a gang, driven by every executor (LocalExecutor,
// SlurmExecutor, FakeExecutor). Pure logic: no I/O, no threads, no clock of its own — every event
// that depends on time takes `now` from the executor's injected Clock.
//
// States (executor.h GangState):
//
//   QUEUED --Placed(kPending)--> PENDING --Placed(kRunning)--> RUNNING
//   RUNNING --stop (success, failure, timeout, cancel, gang restart)--> stopping
//   stopping --Stopped()--> SUCCEEDED | FAILED | CANCELLED, or RUNNING again (gang restart)
//   CANCELLING is the visible state of a stop whose goal is kCancel.
//   QUEUED --Cancel()--> CANCELLED at once ("cancelled before it started").
//
// Rules every executor shares through it:
// - Terminal states are final: every event on a SUCCEEDED/FAILED/CANCELLED gang is ignored.
// - Restart budget: GangSpec::max_restarts per job. A failed replica is restarted alone while the
//   budget lasts, or the whole gang (restart_job_on_worker_restart, or an executor that can only
//   restart gangs, e.g. Slurm); each restart, of one replica or of the gang, uses one. Budget
//   spent: FAILED "<what> after N restarts".
// - Restart backoff (RestartBackoff): restart k of a job starts no earlier than the failed
//   replica's exit + initial * 2^(k-1), at most `max` (1s, 2s, 4s, ... by default). The action
//   carries that time (not_before); the executor keeps it with what waits (persisted, so a server
//   restart neither restarts at once nor forgets the wait) and starts it once due. Meanwhile the
//   gang keeps its state (RUNNING); a cancel or a timeout ends it at once without the restart.
// - Timeout: from the first RUNNING (start_time survives restarts and re-adoption), plus the
//   policy's slack; a pending gang restart becomes a timeout.
// - Stop: the executor sends SIGTERM (kTerminate), after kill_grace SIGKILL (kKill, once), and
//   reports Stopped() once nothing runs; the stop goal then decides the terminal state.
// - Cancel wins over a pending gang restart; a stop already headed for a terminal state keeps its
//   goal.
// - A replica exiting with a permanent code (replica_contract::IsPermanentExit: 64-66, 77, 78,
//   126, 127) cannot succeed on a retry: the gang stops FAILED with kConfigError at once, whatever
//   budget is left. Every failure's message carries the replica's last stderr line
//   (ReplicaExitMessage).
// - A success is the primary replica(s) exiting 0 (PrimarySucceeded).
//
// The GangRecord is what executors persist (gang_record.h), so a re-adopted gang continues where
// it was. Thread-safety: none; executors call it under their own lock.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/executor.h"

namespace trainyard::executor {

// Why a gang is stopping. One enum for every executor; persisted by name (StopGoalName).
enum class StopGoal { kNone, kSucceed, kFail, kCancel, kTimeout, kRestartGang };
std::string StopGoalName(StopGoal goal);                            // "NONE", "SUCCEED", ...
std::optional<StopGoal> StopGoalFromName(const std::string& name);  // nullopt if unknown

// The lifecycle part of an executor's gang record. Executors derive their Gang from it.
struct GangRecord {
  GangState state = GangState::kQueued;
  GangFailure failure = GangFailure::kNone;  // set with the terminal state
  int restarts_used = 0;
  std::optional<std::chrono::system_clock::time_point> start_time, end_time;
  std::string error_message;
  StopGoal stop_goal = StopGoal::kNone;
  std::string stop_message;  // error_message once the stop ends
  GangFailure stop_failure = GangFailure::kNone;
  std::chrono::system_clock::time_point stop_started;
  bool killed = false;  // SIGKILL / the final scancel was sent in the current stop
  // During a stop for a gang restart: when the restart may start (backoff); handed to the
  // executor by Stopped() (LifecycleAction::not_before), unset otherwise.
  std::optional<std::chrono::system_clock::time_point> restart_due;
};

// The gang-level part of a GangStatus (id, state, failure, message, times); replicas left empty.
GangStatus StatusOfRecord(const std::string& job_id, const GangRecord& record);

// What an executor does next. `log` (may be empty) is a line for the job's log.
struct LifecycleAction {
  enum class Kind {
    kNone,            // nothing to do
    kTerminate,       // send the gentle stop (SIGTERM) to every running replica
    kKill,            // the grace is over: SIGKILL what still runs (once per stop)
    kRestartReplica,  // start the replica that failed again (same placement)
    kRestartGang,     // every replica has stopped: start them all again
    kFinished,        // the gang is in a terminal state: release its resources, persist durably
  };
  Kind kind = Kind::kNone;
  std::string log;
  // kRestartReplica / kRestartGang: start no earlier than this (restart backoff); unset = now.
  std::optional<std::chrono::system_clock::time_point> not_before;
};

// The wait before restart k of a job (k from 1): initial * 2^(k-1), at most `max`; 0 when
// initial is 0 (no backoff). Executors take it from their options (LocalExecutorOptions,
// SlurmExecutorOptions, FakeExecutor::SetRestartBackoff); the defaults are these: the first
// restart quick (a flaky node, a port still held), a crash loop slowed to one try in 5 minutes.
struct RestartBackoff {
  std::chrono::seconds initial{1};
  std::chrono::seconds max{300};
  std::chrono::seconds DelayOf(int restart) const;
};

// What a restart says, in the job log ("restarting workerpool1 replica 0 in 2s (restart 2 of
// 3)", `what` = the replica; "restarting the whole job in 1s (restartJobOnWorkerRestart; restart
// 1 of 3)", `why` = "restartJobOnWorkerRestart") and in the waiting replica's status
// (ReplicaStatus::restart_note: "restarting in 2s (restart 2 of 3)"). No "in" when `wait` is 0.
std::string RestartNote(std::chrono::seconds wait, int restart, int max_restarts,
                        const std::string& what = "", const std::string& why = "");
// The replica's status for a restart due at `due`, seen at `now` (the wait rounded up).
std::string RestartNote(std::chrono::system_clock::time_point due,
                        std::chrono::system_clock::time_point now, int restart, int max_restarts);

// When a replica ended, for the backoff and the gang's end_time: `exited` (its status file's
// end_time), unless unknown or outside [start, now] — a clock that disagrees with ours (another
// node's, or a test's fake one) — where it is `now`.
std::chrono::system_clock::time_point ExitTimeOrNow(
    std::optional<std::chrono::system_clock::time_point> exited,
    std::optional<std::chrono::system_clock::time_point> start,
    std::chrono::system_clock::time_point now);

struct LifecyclePolicy {
  int max_restarts = 0;
  bool restart_job_on_worker_restart = false;
  // The executor cannot restart one replica (a Slurm job is one allocation): every restart is a
  // gang restart.
  bool gang_restarts_only = false;
  std::optional<std::chrono::seconds> timeout;
  std::chrono::seconds kill_grace{30};
  // Added to the timeout before the executor's own check fires (Slurm enforces --time itself;
  // the executor's check is a backstop).
  std::chrono::seconds timeout_slack{0};
  RestartBackoff backoff;

  static LifecyclePolicy From(const GangSpec& spec, RestartBackoff backoff = {});
};

// True when the primary replica exited 0: every replica of pool 0, or every replica when the gang
// has no pool 0. `replicas` are (pool index, exit code if it ended with one); false if empty.
bool PrimarySucceeded(const std::vector<std::pair<int, std::optional<int>>>& replicas);

// "timed out after 600s"
std::string TimeoutMessage(std::chrono::seconds timeout);

// What a replica's exit says in the job's error, with `reason`, the replica's last line on stderr
// (executors read it from the job log; job_log.h LastStderrLine), "" when it wrote none:
// "workerpool1 replica 0 exited with code 2; its last line on stderr: REASON"; for a permanent
// code (replica_contract::IsPermanentExit) "... exited with code 66 (an input is missing, not
// restarted): REASON". Without a reason the part after the code (or the parenthesis) is left out.
inline constexpr char kLastStderrLine[] = "; its last line on stderr: ";
std::string ReplicaExitMessage(const std::string& replica, int exit_code,
                               const std::string& reason);

class GangLifecycle {
 public:
  // Operates on *record (not owned; must outlive this object). Cheap: executors make one per use.
  GangLifecycle(GangRecord* record, LifecyclePolicy policy);

  static bool IsTerminal(GangState state);
  bool terminal() const { return IsTerminal(record_->state); }
  bool stopping() const { return !terminal() && record_->stop_goal != StopGoal::kNone; }
  // Not yet started by the executor (QUEUED).
  bool queued() const { return record_->state == GangState::kQueued; }

  // Where the executor has the gang: kQueued (waiting for resources), kPending (starting) or
  // kRunning (all replicas started). A cancelling gang stays CANCELLING, and a gang that has
  // restarted stays RUNNING while its next start waits. The first RUNNING sets start_time.
  // Returns true if the visible state changed.
  bool Placed(GangState where, std::chrono::system_clock::time_point now);

  // A replica ended with non-zero `exit_code`. `replica` names it ("workerpool1 replica 0"),
  // `what` says what happened (ReplicaExitMessage). A permanent code
  // (replica_contract::IsPermanentExit): a stop with failure kConfigError and message `what`, no
  // restart. Otherwise uses the restart budget: kRestartReplica, or a gang
  // restart (kTerminate while `any_running`, else kRestartGang), or a stop with failure
  // kReplicaFailed (kTerminate, or kFinished when nothing runs). A restart is due at `exited`
  // (when the replica ended, if known: ExitTimeOrNow) plus the backoff: not_before of
  // kRestartReplica, restart_due of the stop for a gang restart; its log line says
  // "restarting <replica> in 2s (restart 2 of 3)".
  LifecycleAction ReplicaFailed(
      const std::string& replica, int exit_code, const std::string& what, bool any_running,
      std::chrono::system_clock::time_point now,
      std::optional<std::chrono::system_clock::time_point> exited = std::nullopt);

  // The primary replica succeeded: stop the rest (kTerminate) or finish SUCCEEDED (kFinished).
  LifecycleAction Succeeded(bool any_running, std::chrono::system_clock::time_point now);

  // Something failed that no restart fixes (a replica lost with no exit code, a start failure,
  // an image that cannot be pulled): stop with `failure` and `message`, no restart.
  LifecycleAction Fail(const std::string& message, GangFailure failure, bool any_running,
                       std::chrono::system_clock::time_point now);

  // Cancel requested. QUEUED: CANCELLED "cancelled before it started" (kFinished). Stopping for
  // a gang restart: the stop becomes a cancel (CANCELLING, kNone: replicas already got SIGTERM).
  // Another stop under way or a terminal gang: kNone. Else CANCELLING + kTerminate, or CANCELLED
  // "cancelled" at once when nothing runs.
  LifecycleAction Cancel(bool any_running, std::chrono::system_clock::time_point now);

  // Time passes. Running: the timeout check (-> stop with kTimeout, "timed out after Ns").
  // Stopping for a gang restart past the timeout: the stop becomes a timeout. Stopping with
  // replicas running past kill_grace: kKill once. Stopping with nothing running: Stopped().
  LifecycleAction Tick(bool any_running, std::chrono::system_clock::time_point now);

  // Every replica has stopped. The goal decides: SUCCEEDED, FAILED (stop message), CANCELLED
  // (kFinished), or a gang restart (RUNNING, kRestartGang with not_before = restart_due, which
  // the executor then keeps). kNone when not stopping.
  LifecycleAction Stopped(std::chrono::system_clock::time_point now);

  // Outcomes only an executor can observe (e.g. Slurm's own TIMEOUT, a job cancelled by a Slurm
  // administrator): the gang ends now in `state` (FAILED or CANCELLED) with `message`/`failure`.
  LifecycleAction EndedElsewhere(GangState state, const std::string& message, GangFailure failure,
                                 std::chrono::system_clock::time_point now);

  // The gang has ended and its replicas' last exit was at `last_exit` (their status files'
  // end_time; nullopt when none is known): end_time becomes ExitTimeOrNow of it, so a gang that
  // ended while the server was down ends when it did, not when it was re-adopted. No-op unless
  // terminal, and for a gang ended by Cancel(), which ends when it was cancelled.
  void EndedAt(std::optional<std::chrono::system_clock::time_point> last_exit);

 private:
  LifecycleAction BeginStop(
      StopGoal goal, std::string message, GangFailure failure, bool any_running,
      std::chrono::system_clock::time_point now,
      std::optional<std::chrono::system_clock::time_point> restart_due = std::nullopt);
  LifecycleAction Finish(GangState state, std::string message, GangFailure failure,
                         std::chrono::system_clock::time_point now);
  bool TimedOut(std::chrono::system_clock::time_point now) const;

  GangRecord* record_;
  LifecyclePolicy policy_;
};

}  // namespace trainyard::executor
