// GangLifecycle on a fake clock: every state, event and rule, as a trace of
// "action | state goal failure restarts message" strings.
#include "executor/gang_lifecycle.h"

#include <gtest/gtest.h>

#include "executor/gang_record.h"

namespace trainyard::executor {
namespace {

using namespace std::chrono_literals;
using Kind = LifecycleAction::Kind;
using TimePoint = std::chrono::system_clock::time_point;

std::string KindName(Kind k) {
  switch (k) {
    case Kind::kNone:
      return "none";
    case Kind::kTerminate:
      return "terminate";
    case Kind::kKill:
      return "kill";
    case Kind::kRestartReplica:
      return "restart-replica";
    case Kind::kRestartGang:
      return "restart-gang";
    case Kind::kFinished:
      return "finished";
  }
  return "?";
}

class GangLifecycleTest : public ::testing::Test {
 protected:
  GangLifecycle Lc() { return GangLifecycle(&record_, policy_); }
  // The action and the record after it, in one line.
  std::string Show(const LifecycleAction& a) {
    std::string s = KindName(a.kind) + (a.log.empty() ? "" : " [" + a.log + "]") + " | " +
                    GangStateName(record_.state) + " " + StopGoalName(record_.stop_goal) + " " +
                    GangFailureName(record_.failure) + " " + std::to_string(record_.restarts_used);
    if (!record_.error_message.empty()) s += " " + record_.error_message;
    return s;
  }
  void Run() {
    Lc().Placed(GangState::kPending, now_);
    Lc().Placed(GangState::kRunning, now_);
  }

  TimePoint now_{std::chrono::seconds(1800000000)};
  GangRecord record_;
  LifecyclePolicy policy_;
};

TEST_F(GangLifecycleTest, QueuedPendingRunningSucceeded) {
  std::string trace = std::to_string(Lc().Placed(GangState::kQueued, now_));
  trace += GangStateName(record_.state);
  trace += " " + std::to_string(Lc().Placed(GangState::kPending, now_));
  trace += GangStateName(record_.state);
  trace += " " + std::to_string(Lc().Placed(GangState::kRunning, now_ + 5s));
  trace += GangStateName(record_.state);
  trace += " start+" + std::to_string((*record_.start_time - now_) / 1s);
  trace += " | " + Show(Lc().Succeeded(/*any_running=*/true, now_ + 9s));
  trace += " | " + Show(Lc().Stopped(now_ + 10s));
  trace += " end+" + std::to_string((*record_.end_time - now_) / 1s);
  EXPECT_EQ(trace,
            "0QUEUED 1PENDING 1RUNNING start+5 | terminate | RUNNING SUCCEED NONE 0 | finished | "
            "SUCCEEDED SUCCEED NONE 0 end+10");
}

TEST_F(GangLifecycleTest, SuccessWithNothingRunningFinishesAtOnce) {
  Run();
  EXPECT_EQ(Show(Lc().Succeeded(false, now_)), "finished | SUCCEEDED SUCCEED NONE 0");
}

TEST_F(GangLifecycleTest, ReplicaRestartsAloneUntilTheBudgetIsSpent) {
  policy_.max_restarts = 2;
  Run();
  std::string what = "workerpool1 replica 0 exited with code 2";
  std::string trace = Show(Lc().ReplicaFailed("workerpool1 replica 0", 2, what, true, now_));
  trace += "\n" + Show(Lc().ReplicaFailed("workerpool1 replica 0", 2, what, true, now_));
  trace += "\n" + Show(Lc().ReplicaFailed("workerpool1 replica 0", 2, what, true, now_));
  trace += "\n" + Show(Lc().Stopped(now_));
  EXPECT_EQ(trace,
            "restart-replica [restarting workerpool1 replica 0 in 1s (restart 1 of 2)] | RUNNING "
            "NONE NONE 1\n"
            "restart-replica [restarting workerpool1 replica 0 in 2s (restart 2 of 2)] | RUNNING "
            "NONE NONE 2\n"
            "terminate | RUNNING FAIL NONE 2\n"
            "finished | FAILED FAIL REPLICA_FAILED 2 workerpool1 replica 0 exited with code 2 "
            "after 2 restarts");
}

TEST_F(GangLifecycleTest, NoRestartsMeansFailedWithoutASuffix) {
  Run();
  EXPECT_EQ(Show(Lc().ReplicaFailed("workerpool0 replica 0", 5,
                                    "workerpool0 replica 0 exited with code 5", false, now_)),
            "finished | FAILED FAIL REPLICA_FAILED 0 workerpool0 replica 0 exited with code 5");
}

TEST_F(GangLifecycleTest, AConfigurationErrorFailsAtOnceWhateverTheBudget) {
  policy_.max_restarts = 3;
  policy_.restart_job_on_worker_restart = true;
  Run();
  const std::string what =
      ReplicaExitMessage("workerpool1 replica 0", 78, "train: cannot write /b/out: mode 0755");
  std::string trace = Show(Lc().ReplicaFailed("workerpool1 replica 0", 78, what, true, now_));
  trace += "\n" + Show(Lc().Stopped(now_));
  EXPECT_EQ(trace,
            "terminate | RUNNING FAIL NONE 0\n"
            "finished | FAILED FAIL CONFIG_ERROR 0 workerpool1 replica 0 exited with code 78 (a "
            "configuration error, not restarted): train: cannot write /b/out: mode 0755");
}

TEST(ReplicaExitMessageTest, EveryExitCarriesTheReplicasLastStderrLine) {
  EXPECT_EQ(ReplicaExitMessage("workerpool0 replica 0", 2, "file not found: gs://b/x.csv") + " | " +
                ReplicaExitMessage("workerpool0 replica 0", 2, "") + " | " +
                ReplicaExitMessage("workerpool0 replica 0", 78, "") + " | " +
                ReplicaExitMessage("workerpool0 replica 0", 127, "[trainyard] cannot execute 'x'"),
            "workerpool0 replica 0 exited with code 2; its last line on stderr: file not found: "
            "gs://b/x.csv | workerpool0 replica 0 exited with code 2 | workerpool0 replica 0 "
            "exited with code 78 (a configuration error, not restarted) | workerpool0 replica 0 "
            "exited with code 127 (the command was not found, not restarted): [trainyard] cannot "
            "execute 'x'");
}

// 64, 65, 66, 77, 78, 126 and 127 say a retry would fail the same way; 75 (EX_TEMPFAIL) and the
// rest are restarted.
TEST_F(GangLifecycleTest, PermanentExitCodesEndTheJobAtOnce) {
  std::string got;
  for (int code : {1, 2, 64, 65, 66, 75, 77, 78, 126, 127, 137}) {
    record_ = GangRecord{};
    policy_.max_restarts = 3;
    Run();
    const LifecycleAction a =
        Lc().ReplicaFailed("workerpool0 replica 0", code,
                           ReplicaExitMessage("workerpool0 replica 0", code, ""), false, now_);
    got += std::to_string(code) + (a.kind == LifecycleAction::Kind::kRestartReplica ? "r " : "f ");
  }
  EXPECT_EQ(got, "1r 2r 64f 65f 66f 75r 77f 78f 126f 127f 137r ");
}

TEST_F(GangLifecycleTest, TheRestartCountComesBeforeTheReplicasWords) {
  policy_.max_restarts = 1;
  Run();
  const std::string what = ReplicaExitMessage("workerpool0 replica 0", 2, "boom");
  (void)Lc().ReplicaFailed("workerpool0 replica 0", 2, what, false, now_);
  EXPECT_EQ(Show(Lc().ReplicaFailed("workerpool0 replica 0", 2, what, false, now_)),
            "finished | FAILED FAIL REPLICA_FAILED 1 workerpool0 replica 0 exited with code 2 "
            "after 1 restart; its last line on stderr: boom");
}

TEST_F(GangLifecycleTest, GangRestartStopsEveryoneThenStartsThemAgain) {
  policy_.max_restarts = 1;
  policy_.restart_job_on_worker_restart = true;
  Run();
  std::string trace = Show(Lc().ReplicaFailed("workerpool1 replica 0", 1, "x exited", true, now_));
  trace += "\n" + Show(Lc().Tick(/*any_running=*/false, now_));
  trace += "\n" + Show(Lc().ReplicaFailed("workerpool1 replica 0", 1, "x exited with code 1", false,
                                          now_));
  EXPECT_EQ(
      trace,
      "terminate [restarting the whole job in 1s (restartJobOnWorkerRestart; restart 1 of 1)] "
      "| "
      "RUNNING RESTART_GANG NONE 1\n"
      "restart-gang | RUNNING NONE NONE 1\n"
      "finished | FAILED FAIL REPLICA_FAILED 1 x exited with code 1 after 1 restart");
}

TEST_F(GangLifecycleTest, GangRestartsOnlyExecutorRestartsTheGangWhenNothingRuns) {
  policy_.max_restarts = 3;
  policy_.gang_restarts_only = true;
  Run();
  EXPECT_EQ(Show(Lc().ReplicaFailed("workerpool0 replica 0", 1, "w", false, now_)),
            "restart-gang [restarting the whole job in 1s (restart 1 of 3)] | RUNNING NONE NONE 1");
}

// Issue #45: a crash loop no longer spends its budget in milliseconds. Restart k waits
// 1s * 2^(k-1) from the replica's exit: three quick failures are spaced 1, 2, 4 s.
TEST_F(GangLifecycleTest, RestartsBackOffFromTheExit) {
  policy_.max_restarts = 3;
  Run();
  std::string trace;
  TimePoint t = now_;
  for (int k = 0; k < 3; ++k) {
    // The replica exited 100 ms before the executor noticed.
    LifecycleAction a = Lc().ReplicaFailed("r", 2, "r exited with code 2", false, t + 100ms, t);
    trace += a.log + " at +" + std::to_string((*a.not_before - now_) / 1s) + "s; ";
    t = *a.not_before;  // it starts then and fails at once
  }
  EXPECT_EQ(trace,
            "restarting r in 1s (restart 1 of 3) at +1s; restarting r in 2s (restart 2 of 3) at "
            "+3s; restarting r in 4s (restart 3 of 3) at +7s; ");
}

TEST(RestartBackoffTest, DoublesUpToTheCapAndZeroTurnsItOff) {
  RestartBackoff backoff;  // the default: 1s doubling to 5 min
  std::string got;
  for (int k : {1, 2, 3, 9, 10, 50}) got += std::to_string(backoff.DelayOf(k).count()) + " ";
  got += std::to_string(RestartBackoff{0s, 300s}.DelayOf(4).count()) + " ";
  got += std::to_string(RestartBackoff{10s, 60s}.DelayOf(3).count());
  EXPECT_EQ(got, "1 2 4 256 300 300 0 40");
}

// A replica found ended long ago (after a server restart) is restarted at once; an exit time
// from a clock that disagrees with ours (before the start, or in the future) counts as now.
TEST_F(GangLifecycleTest, TheBackoffCountsFromTheExitWhenItsTimeIsBelievable) {
  policy_.max_restarts = 3;
  Run();
  auto due = [&](TimePoint exited) {
    record_.restarts_used = 0;
    LifecycleAction a = Lc().ReplicaFailed("r", 2, "r exited", false, now_ + 1h, exited);
    return std::to_string((*a.not_before - now_) / 1s) +
           (a.log.find(" in ") == std::string::npos ? "*" : "");
  };
  EXPECT_EQ(due(now_ + 10s) + " " + due(now_ - 10s) + " " + due(now_ + 2h), "11* 3601 3601");
}

// A gang restart waits through the stop: Stopped() hands the due time to the executor, and a
// cancel meanwhile ends the gang at once; restart_due survives a server restart (persisted).
TEST_F(GangLifecycleTest, AGangRestartCarriesItsDueTimeThroughTheStop) {
  policy_.max_restarts = 2;
  policy_.restart_job_on_worker_restart = true;
  Run();
  Lc().ReplicaFailed("r", 1, "r exited", /*any_running=*/true, now_ + 1s, now_);
  nlohmann::json j;
  GangRecordToJson(record_, &j);
  record_ = GangRecord{};
  GangRecordFromJson(j, {}, &record_);
  LifecycleAction restart = Lc().Stopped(now_ + 2s);
  std::string trace = Show(restart) + " due +" + std::to_string((*restart.not_before - now_) / 1s) +
                      "s " + std::to_string(record_.restart_due.has_value());
  trace += "\n" + Show(Lc().Cancel(/*any_running=*/false, now_ + 3s));
  EXPECT_EQ(trace,
            "restart-gang | RUNNING NONE NONE 1 due +1s 0\n"
            "finished | CANCELLED CANCEL CANCELLED 1 cancelled");
}

// endTime is the last replica's exit, also when the executor only learns of it later (a server
// restart); a cancel ends when it was asked for; unbelievable exit times are ignored.
TEST_F(GangLifecycleTest, EndedAtMovesTheEndToTheLastExit) {
  Run();
  auto end_after = [&](StopGoal how, std::optional<TimePoint> last_exit) {
    record_ = GangRecord{};
    Run();
    if (how == StopGoal::kCancel) {
      Lc().Cancel(false, now_ + 1h);
    } else {
      Lc().Succeeded(false, now_ + 1h);
    }
    Lc().EndedAt(last_exit);
    return std::to_string((*record_.end_time - now_) / 1s);
  };
  EXPECT_EQ(end_after(StopGoal::kSucceed, now_ + 60s) + " " +
                end_after(StopGoal::kSucceed, std::nullopt) + " " +
                end_after(StopGoal::kSucceed, now_ - 60s) + " " +
                end_after(StopGoal::kCancel, now_ + 60s),
            "60 3600 3600 3600");
}

TEST_F(GangLifecycleTest, CancelQueuedEndsAtOnce) {
  EXPECT_EQ(Show(Lc().Cancel(false, now_)),
            "finished | CANCELLED NONE CANCELLED 0 cancelled before it started");
}

TEST_F(GangLifecycleTest, CancelRunningTermsThenKillsAfterTheGrace) {
  policy_.kill_grace = 30s;
  Run();
  std::string trace = Show(Lc().Cancel(true, now_));
  trace += "\n" + Show(Lc().Tick(true, now_ + 29s));
  trace += "\n" + Show(Lc().Tick(true, now_ + 30s));
  trace += "\n" + Show(Lc().Tick(true, now_ + 31s));    // SIGKILL only once
  trace += "\n" + Show(Lc().Cancel(true, now_ + 32s));  // a second cancel changes nothing
  trace += "\n" + Show(Lc().Tick(false, now_ + 33s));
  EXPECT_EQ(trace,
            "terminate | CANCELLING CANCEL NONE 0\n"
            "none | CANCELLING CANCEL NONE 0\n"
            "kill [still running 30s after SIGTERM; sending SIGKILL] | CANCELLING CANCEL NONE 0\n"
            "none | CANCELLING CANCEL NONE 0\n"
            "none | CANCELLING CANCEL NONE 0\n"
            "finished | CANCELLED CANCEL CANCELLED 0 cancelled");
}

TEST_F(GangLifecycleTest, CancelWithNothingRunningEndsAtOnce) {
  Run();
  EXPECT_EQ(Show(Lc().Cancel(false, now_)), "finished | CANCELLED CANCEL CANCELLED 0 cancelled");
}

TEST_F(GangLifecycleTest, CancelWinsOverAGangRestartButNotOverAFailure) {
  policy_.max_restarts = 1;
  policy_.restart_job_on_worker_restart = true;
  Run();
  Lc().ReplicaFailed("r", 1, "r exited", true, now_);
  std::string trace = Show(Lc().Cancel(true, now_));
  trace += "\n" + Show(Lc().Stopped(now_));
  record_ = {};
  Run();
  Lc().Fail("r lost", GangFailure::kReplicaLost, true, now_);
  trace += "\n" + Show(Lc().Cancel(true, now_));
  trace += "\n" + Show(Lc().Stopped(now_));
  EXPECT_EQ(trace,
            "none | CANCELLING CANCEL NONE 1\n"
            "finished | CANCELLED CANCEL CANCELLED 1 cancelled\n"
            "none | RUNNING FAIL NONE 0\n"
            "finished | FAILED FAIL REPLICA_LOST 0 r lost");
}

TEST_F(GangLifecycleTest, TimeoutFromTheFirstRunningWithSlack) {
  policy_.timeout = 600s;
  policy_.timeout_slack = 90s;
  Lc().Placed(GangState::kPending, now_);
  std::string trace = Show(Lc().Tick(true, now_ + 10000s));  // not running yet: no clock
  Lc().Placed(GangState::kRunning, now_);
  trace += "\n" + Show(Lc().Tick(true, now_ + 689s));
  trace += "\n" + Show(Lc().Tick(true, now_ + 690s));
  trace += "\n" + Show(Lc().Stopped(now_ + 691s));
  EXPECT_EQ(trace,
            "none | PENDING NONE NONE 0\n"
            "none | RUNNING NONE NONE 0\n"
            "terminate | RUNNING TIMEOUT NONE 0\n"
            "finished | FAILED TIMEOUT TIMEOUT 0 timed out after 600s");
}

TEST_F(GangLifecycleTest, AGangRestartPastTheTimeoutBecomesATimeout) {
  policy_.timeout = 60s;
  policy_.max_restarts = 1;
  policy_.restart_job_on_worker_restart = true;
  Run();
  Lc().ReplicaFailed("r", 1, "r exited", true, now_ + 50s);
  EXPECT_EQ(Show(Lc().Tick(false, now_ + 61s)),
            "finished | FAILED TIMEOUT TIMEOUT 1 timed out after 60s");
}

TEST_F(GangLifecycleTest, StartTimeSurvivesAGangRestart) {
  policy_.timeout = 60s;
  policy_.max_restarts = 1;
  policy_.gang_restarts_only = true;
  Run();
  Lc().ReplicaFailed("r", 1, "r exited", false, now_ + 30s);
  // Waiting for its next allocation, a restarted gang is RUNNING and its clock keeps going.
  bool changed = Lc().Placed(GangState::kQueued, now_ + 40s);
  EXPECT_EQ(std::to_string(changed) + " " + Show(Lc().Tick(true, now_ + 60s)),
            "0 terminate | RUNNING TIMEOUT NONE 1");
}

TEST_F(GangLifecycleTest, FailAndEndedElsewhereCarryTheirFailure) {
  std::string trace;
  for (GangFailure f :
       {GangFailure::kStartFailed, GangFailure::kLostOnAdopt, GangFailure::kImageUnavailable}) {
    record_ = {};
    Run();
    trace += Show(Lc().Fail("why", f, false, now_)) + "\n";
  }
  record_ = {};
  Run();
  trace +=
      Show(Lc().EndedElsewhere(GangState::kCancelled, "by admin", GangFailure::kCancelled, now_)) +
      "\n";
  record_ = {};
  Run();
  trace += Show(Lc().EndedElsewhere(GangState::kFailed, "timed out after 5s (Slurm)",
                                    GangFailure::kTimeout, now_));
  EXPECT_EQ(trace,
            "finished | FAILED FAIL START_FAILED 0 why\n"
            "finished | FAILED FAIL LOST_ON_ADOPT 0 why\n"
            "finished | FAILED FAIL IMAGE_UNAVAILABLE 0 why\n"
            "finished | CANCELLED NONE CANCELLED 0 by admin\n"
            "finished | FAILED NONE TIMEOUT 0 timed out after 5s (Slurm)");
}

TEST_F(GangLifecycleTest, TerminalStatesAreFinal) {
  Run();
  Lc().Succeeded(false, now_);
  std::string trace;
  trace += Show(Lc().Cancel(true, now_)) + "\n";
  trace += Show(Lc().Fail("x", GangFailure::kReplicaLost, true, now_)) + "\n";
  trace += Show(Lc().ReplicaFailed("r", 1, "r", true, now_)) + "\n";
  trace += Show(Lc().Tick(true, now_ + 10000s)) + "\n";
  trace += Show(Lc().Stopped(now_)) + "\n";
  trace += Show(Lc().EndedElsewhere(GangState::kFailed, "x", GangFailure::kTimeout, now_));
  trace += " " + std::to_string(Lc().Placed(GangState::kRunning, now_));
  EXPECT_EQ(trace,
            "none | SUCCEEDED SUCCEED NONE 0\n"
            "none | SUCCEEDED SUCCEED NONE 0\n"
            "none | SUCCEEDED SUCCEED NONE 0\n"
            "none | SUCCEEDED SUCCEED NONE 0\n"
            "none | SUCCEEDED SUCCEED NONE 0\n"
            "none | SUCCEEDED SUCCEED NONE 0 0");
}

TEST_F(GangLifecycleTest, EventsDuringAStopDoNotChangeItsGoal) {
  Run();
  Lc().Succeeded(true, now_);
  std::string trace = Show(Lc().ReplicaFailed("r", 143, "r exited with code 143", true, now_));
  trace += "\n" + Show(Lc().Fail("lost", GangFailure::kReplicaLost, true, now_));
  trace += "\n" + Show(Lc().Succeeded(true, now_));
  EXPECT_EQ(trace,
            "none | RUNNING SUCCEED NONE 0\n"
            "none | RUNNING SUCCEED NONE 0\n"
            "none | RUNNING SUCCEED NONE 0");
}

TEST(GangRecordTest, RoundTripsAndReadsStateFilesOfTheOldPerExecutorGoals) {
  GangRecord r;
  r.state = GangState::kFailed;
  r.failure = GangFailure::kTimeout;
  r.stop_goal = StopGoal::kTimeout;
  r.stop_failure = GangFailure::kTimeout;
  r.error_message = "timed out after 5s";
  r.restart_due = std::chrono::system_clock::time_point(std::chrono::seconds(1800000000));
  nlohmann::json j;
  GangRecordToJson(r, &j);
  GangRecord back;
  GangRecordFromJson(j, {}, &back);
  // An old Slurm file: goal 1 meant cancel there, no failure fields.
  nlohmann::json old = j;
  old["stop_goal"] = 1;
  old["state"] = "CANCELLED";
  old.erase("failure");
  old.erase("stop_failure");
  GangRecord legacy;
  GangRecordFromJson(old, {StopGoal::kNone, StopGoal::kCancel}, &legacy);
  EXPECT_EQ(j["stop_goal"].dump() + " " + GangFailureName(back.failure) + " " +
                StopGoalName(back.stop_goal) + " " + back.error_message + " " +
                std::to_string(back.restart_due == r.restart_due) + " | " +
                StopGoalName(legacy.stop_goal) + " " + GangFailureName(legacy.failure) + " " +
                GangFailureName(legacy.stop_failure),
            "\"TIMEOUT\" TIMEOUT TIMEOUT timed out after 5s 1 | CANCEL CANCELLED CANCELLED");
}

TEST(PrimarySucceededTest, PoolZeroDecidesElseEveryReplica) {
  std::string got;
  for (const auto& replicas :
       std::vector<std::vector<std::pair<int, std::optional<int>>>>{{{0, 0}, {1, std::nullopt}},
                                                                    {{0, std::nullopt}, {1, 0}},
                                                                    {{0, 1}},
                                                                    {{1, 0}, {1, 0}},
                                                                    {{1, 0}, {1, std::nullopt}},
                                                                    {}}) {
    got += PrimarySucceeded(replicas) ? "1" : "0";
  }
  EXPECT_EQ(got, "100100");
}

TEST(StopGoalTest, NamesRoundTrip) {
  std::string got;
  for (StopGoal g : {StopGoal::kNone, StopGoal::kSucceed, StopGoal::kFail, StopGoal::kCancel,
                     StopGoal::kTimeout, StopGoal::kRestartGang}) {
    got += StopGoalName(g) + (StopGoalFromName(StopGoalName(g)) == g ? " " : "! ");
  }
  for (GangFailure f :
       {GangFailure::kNone, GangFailure::kReplicaFailed, GangFailure::kReplicaLost,
        GangFailure::kTimeout, GangFailure::kCancelled, GangFailure::kStartFailed,
        GangFailure::kLostOnAdopt, GangFailure::kImageUnavailable, GangFailure::kConfigError}) {
    got += GangFailureName(f) + (GangFailureFromName(GangFailureName(f)) == f ? " " : "! ");
  }
  EXPECT_EQ(got + std::to_string(StopGoalFromName("nope").has_value()),
            "NONE SUCCEED FAIL CANCEL TIMEOUT RESTART_GANG NONE REPLICA_FAILED REPLICA_LOST "
            "TIMEOUT CANCELLED START_FAILED LOST_ON_ADOPT IMAGE_UNAVAILABLE CONFIG_ERROR 0");
}

}  // namespace
}  // namespace trainyard::executor
