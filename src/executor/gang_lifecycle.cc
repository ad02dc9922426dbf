#include "executor/gang_lifecycle.h"

#include <algorithm>

#include "replica_contract/replica_contract.h"

namespace trainyard::executor {

using Kind = LifecycleAction::Kind;
using TimePoint = std::chrono::system_clock::time_point;

namespace {

constexpr StopGoal kAllGoals[] = {StopGoal::kNone,   StopGoal::kSucceed, StopGoal::kFail,
                                  StopGoal::kCancel, StopGoal::kTimeout, StopGoal::kRestartGang};

std::string Plural(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string StopGoalName(StopGoal goal) {
  switch (goal) {
    case StopGoal::kNone:
      return "NONE";
    case StopGoal::kSucceed:
      return "SUCCEED";
    case StopGoal::kFail:
      return "FAIL";
    case StopGoal::kCancel:
      return "CANCEL";
    case StopGoal::kTimeout:
      return "TIMEOUT";
    case StopGoal::kRestartGang:
      return "RESTART_GANG";
  }
  return "NONE";
}

std::optional<StopGoal> StopGoalFromName(const std::string& name) {
  for (StopGoal g : kAllGoals) {
    if (StopGoalName(g) == name) return g;
  }
  return std::nullopt;
}

GangStatus StatusOfRecord(const std::string& job_id, const GangRecord& record) {
  GangStatus s;
  s.job_id = job_id;
  s.state = record.state;
  s.failure = record.failure;
  s.error_message = record.error_message;
  s.start_time = record.start_time;
  s.end_time = record.end_time;
  return s;
}

std::chrono::seconds RestartBackoff::DelayOf(int restart) const {
  if (initial.count() <= 0 || restart < 1) return std::chrono::seconds(0);
  std::chrono::seconds delay = initial;
  for (int k = 1; k < restart && delay < max; ++k) delay *= 2;
  return std::min(delay, std::max(max, initial));
}

std::string RestartNote(std::chrono::seconds wait, int restart, int max_restarts,
                        const std::string& what, const std::string& why) {
  std::string note = "restarting" + (what.empty() ? "" : " " + what);
  if (wait.count() > 0) note += " in " + std::to_string(wait.count()) + "s";
  return note + " (" + (why.empty() ? "" : why + "; ") + "restart " + std::to_string(restart) +
         " of " + std::to_string(max_restarts) + ")";
}

std::string RestartNote(TimePoint due, TimePoint now, int restart, int max_restarts) {
  return RestartNote(std::chrono::ceil<std::chrono::seconds>(due - now), restart, max_restarts);
}

TimePoint ExitTimeOrNow(std::optional<TimePoint> exited, std::optional<TimePoint> start,
                        TimePoint now) {
  if (!exited || *exited > now || (start && *exited < *start)) return now;
  return *exited;
}

LifecyclePolicy LifecyclePolicy::From(const GangSpec& spec, RestartBackoff backoff) {
  LifecyclePolicy p;
  p.backoff = backoff;
  p.max_restarts = spec.max_restarts;
  p.restart_job_on_worker_restart = spec.restart_job_on_worker_restart;
  p.timeout = spec.timeout;
  p.kill_grace = spec.kill_grace;
  return p;
}

bool PrimarySucceeded(const std::vector<std::pair<int, std::optional<int>>>& replicas) {
  bool has_pool0 =
      std::any_of(replicas.begin(), replicas.end(), [](const auto& r) { return r.first == 0; });
  bool any = false;
  for (const auto& [pool, code] : replicas) {
    if (has_pool0 && pool != 0) continue;
    any = true;
    if (code != 0) return false;
  }
  return any;
}

std::string TimeoutMessage(std::chrono::seconds timeout) {
  return "timed out after " + std::to_string(timeout.count()) + "s";
}

std::string ReplicaExitMessage(const std::string& replica, int exit_code,
                               const std::string& reason) {
  std::string message = replica + " exited with code " + std::to_string(exit_code);
  if (replica_contract::IsPermanentExit(exit_code)) {
    message += " (" + replica_contract::PermanentExitMeaning(exit_code) + ", not restarted)";
    return reason.empty() ? message : message + ": " + reason;
  }
  return reason.empty() ? message : message + kLastStderrLine + reason;
}

GangLifecycle::GangLifecycle(GangRecord* record, LifecyclePolicy policy)
    : record_(record), policy_(policy) {}

bool GangLifecycle::IsTerminal(GangState s) {
  return s == GangState::kSucceeded || s == GangState::kFailed || s == GangState::kCancelled;
}

bool GangLifecycle::Placed(GangState where, TimePoint now) {
  if (terminal()) return false;
  GangState want = where;
  if (record_->stop_goal == StopGoal::kCancel) {
    want = GangState::kCancelling;
  } else if (record_->restarts_used > 0) {
    want = GangState::kRunning;  // a restarted gang waiting for its next start is still running
  }
  if (where == GangState::kRunning && !record_->start_time) record_->start_time = now;
  if (want == record_->state) return false;
  record_->state = want;
  return true;
}

LifecycleAction GangLifecycle::ReplicaFailed(const std::string& replica, int exit_code,
                                             const std::string& what, bool any_running,
                                             TimePoint now, std::optional<TimePoint> exited) {
  if (terminal() || stopping()) return {};
  if (replica_contract::IsPermanentExit(exit_code)) {
    return BeginStop(StopGoal::kFail, what, GangFailure::kConfigError, any_running, now);
  }
  if (record_->restarts_used < policy_.max_restarts) {
    record_->restarts_used += 1;
    // Counted from the exit: a replica found ended long ago (a server restart) is not held back.
    const TimePoint due = ExitTimeOrNow(exited, record_->start_time, now) +
                          policy_.backoff.DelayOf(record_->restarts_used);
    const auto wait = std::chrono::ceil<std::chrono::seconds>(
        due > now ? due - now : TimePoint::duration::zero());
    if (policy_.restart_job_on_worker_restart || policy_.gang_restarts_only) {
      LifecycleAction stop =
          BeginStop(StopGoal::kRestartGang, "", GangFailure::kNone, any_running, now, due);
      stop.log =
          RestartNote(wait, record_->restarts_used, policy_.max_restarts, "the whole job",
                      policy_.restart_job_on_worker_restart ? "restartJobOnWorkerRestart" : "");
      return stop;
    }
    return {Kind::kRestartReplica,
            RestartNote(wait, record_->restarts_used, policy_.max_restarts, replica), due};
  }
  // "... exited with code 2 after 3 restarts; its last line on stderr: ...": the count belongs
  // to the exit, before the replica's own words.
  std::string message = what;
  if (record_->restarts_used > 0) {
    const size_t reason = message.find(kLastStderrLine);
    message.insert(reason == std::string::npos ? message.size() : reason,
                   " after " + Plural(record_->restarts_used, "restart"));
  }
  return BeginStop(StopGoal::kFail, std::move(message), GangFailure::kReplicaFailed, any_running,
                   now);
}

LifecycleAction GangLifecycle::Succeeded(bool any_running, TimePoint now) {
  if (terminal() || stopping()) return {};
  return BeginStop(StopGoal::kSucceed, "", GangFailure::kNone, any_running, now);
}

LifecycleAction GangLifecycle::Fail(const std::string& message, GangFailure failure,
                                    bool any_running, TimePoint now) {
  if (terminal()) return {};
  if (stopping() && record_->stop_goal != StopGoal::kRestartGang) return {};
  return BeginStop(StopGoal::kFail, message, failure, any_running, now);
}

LifecycleAction GangLifecycle::Cancel(bool any_running, TimePoint now) {
  if (terminal()) return {};
  if (queued() && record_->stop_goal == StopGoal::kNone) {
    return Finish(GangState::kCancelled, "cancelled before it started", GangFailure::kCancelled,
                  now);
  }
  if (stopping()) {
    if (record_->stop_goal != StopGoal::kRestartGang) return {};
    record_->stop_goal = StopGoal::kCancel;
    record_->stop_message = "cancelled";
    record_->stop_failure = GangFailure::kCancelled;
    record_->state = GangState::kCancelling;
    if (!any_running) return Stopped(now);
    return {};
  }
  return BeginStop(StopGoal::kCancel, "cancelled", GangFailure::kCancelled, any_running, now);
}

bool GangLifecycle::TimedOut(TimePoint now) const {
  return policy_.timeout && record_->start_time &&
         now >= *record_->start_time + *policy_.timeout + policy_.timeout_slack;
}

LifecycleAction GangLifecycle::Tick(bool any_running, TimePoint now) {
  if (terminal()) return {};
  if (!stopping()) {
    if (record_->state != GangState::kRunning || !TimedOut(now)) return {};
    return BeginStop(StopGoal::kTimeout, TimeoutMessage(*policy_.timeout), GangFailure::kTimeout,
                     any_running, now);
  }
  if (record_->stop_goal == StopGoal::kRestartGang && TimedOut(now)) {
    record_->stop_goal = StopGoal::kTimeout;
    record_->stop_message = TimeoutMessage(*policy_.timeout);
    record_->stop_failure = GangFailure::kTimeout;
  }
  if (!any_running) return Stopped(now);
  if (!record_->killed && now >= record_->stop_started + policy_.kill_grace) {
    record_->killed = true;
    return {Kind::kKill, "still running " + std::to_string(policy_.kill_grace.count()) +
                             "s after SIGTERM; sending SIGKILL"};
  }
  return {};
}

LifecycleAction GangLifecycle::Stopped(TimePoint now) {
  if (!stopping()) return {};
  switch (record_->stop_goal) {
    case StopGoal::kSucceed:
      return Finish(GangState::kSucceeded, "", GangFailure::kNone, now);
    case StopGoal::kCancel:
      return Finish(GangState::kCancelled, record_->stop_message, record_->stop_failure, now);
    case StopGoal::kRestartGang: {
      record_->stop_goal = StopGoal::kNone;
      record_->stop_message.clear();
      record_->killed = false;
      record_->state = GangState::kRunning;
      LifecycleAction restart{Kind::kRestartGang, "", record_->restart_due};
      record_->restart_due.reset();
      return restart;
    }
    case StopGoal::kFail:
    case StopGoal::kTimeout:
    case StopGoal::kNone:
      break;
  }
  return Finish(GangState::kFailed, record_->stop_message, record_->stop_failure, now);
}

LifecycleAction GangLifecycle::EndedElsewhere(GangState state, const std::string& message,
                                              GangFailure failure, TimePoint now) {
  if (terminal()) return {};
  if (state != GangState::kFailed && state != GangState::kCancelled) state = GangState::kFailed;
  return Finish(state, message, failure, now);
}

void GangLifecycle::EndedAt(std::optional<TimePoint> last_exit) {
  if (!terminal() || !record_->end_time || record_->stop_goal == StopGoal::kCancel) return;
  record_->end_time = ExitTimeOrNow(last_exit, record_->start_time, *record_->end_time);
}

LifecycleAction GangLifecycle::BeginStop(StopGoal goal, std::string message, GangFailure failure,
                                         bool any_running, TimePoint now,
                                         std::optional<TimePoint> restart_due) {
  record_->restart_due = restart_due;
  record_->stop_goal = goal;
  record_->stop_message = std::move(message);
  record_->stop_failure = failure;
  record_->stop_started = now;
  record_->killed = false;
  if (goal == StopGoal::kCancel) record_->state = GangState::kCancelling;
  if (!any_running) return Stopped(now);
  return {Kind::kTerminate, ""};
}

LifecycleAction GangLifecycle::Finish(GangState state, std::string message, GangFailure failure,
                                      TimePoint now) {
  record_->state = state;
  record_->error_message = std::move(message);
  record_->failure = state == GangState::kSucceeded ? GangFailure::kNone : failure;
  record_->end_time = now;
  return {Kind::kFinished, ""};
}

}  // namespace trainyard::executor
