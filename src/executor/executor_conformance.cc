#include "executor/executor_conformance.h"

#include <chrono>
#include <sstream>

#include "executor/gang_lifecycle.h"
#include "executor/job_dir_layout.h"
#include "testing/test_util.h"

namespace trainyard::executor {

using namespace std::chrono_literals;

std::vector<std::string> EncodeReplicaPlan(const ReplicaPlan& plan) {
  std::string attempts;
  for (int a : plan.attempts) {
    attempts += (attempts.empty() ? "" : ",") +
                (a == ReplicaPlan::kUntilStopped ? std::string("T") : std::to_string(a));
  }
  return {"conformance-replica", "print=" + plan.print, "attempts=" + attempts,
          "error=" + plan.error};
}

std::optional<ReplicaPlan> DecodeReplicaPlan(const std::vector<std::string>& argv) {
  if (argv.size() != 4 || argv[0] != "conformance-replica" || !argv[1].starts_with("print=") ||
      !argv[2].starts_with("attempts=") || !argv[3].starts_with("error=")) {
    return std::nullopt;
  }
  ReplicaPlan plan;
  plan.print = argv[1].substr(6);
  plan.error = argv[3].substr(6);
  plan.attempts.clear();
  std::stringstream ss(argv[2].substr(9));
  std::string item;
  while (std::getline(ss, item, ',')) {
    plan.attempts.push_back(item == "T" ? ReplicaPlan::kUntilStopped : std::stoi(item));
  }
  if (plan.attempts.empty()) return std::nullopt;
  return plan;
}

std::chrono::system_clock::time_point SteppedClock::Now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

void SteppedClock::Advance() {
  std::lock_guard<std::mutex> lock(mu_);
  now_ += std::chrono::seconds(1);
}

int PlannedExit(const ReplicaPlan& plan, int attempt) {
  size_t i = std::min<size_t>(attempt < 1 ? 0 : attempt - 1, plan.attempts.size() - 1);
  return plan.attempts[i];
}

void ExecutorConformanceTest::SetUp() {
  dir_ = testing::MakeTestDir();
  harness_ = GetParam()(dir_);
  ASSERT_NE(harness_, nullptr);
  executor_ = harness_->Make();
  ASSERT_NE(executor_, nullptr);
}

void ExecutorConformanceTest::TearDown() {
  if (!executor_) return;
  // Leave nothing running behind: cancel what is left and wait for it to end.
  for (const char* id : {"ok", "retry", "spent", "config", "gang", "blocker", "queued", "run",
                         "slow", "adopted", "ended", "backoff", "waiting"}) {
    auto s = executor_->Get(id);
    if (!s.ok() || GangLifecycle::IsTerminal(s->state)) continue;
    (void)executor_->Cancel(id);
    WaitDone(id);
  }
  executor_->Shutdown();
}

GangSpec ExecutorConformanceTest::Spec(const std::string& id,
                                       const std::vector<ReplicaPlan>& plans) {
  GangSpec spec;
  spec.job_id = id;
  spec.job_name = "projects/p/locations/l/customJobs/" + id;
  spec.job_dir = JobDir(dir_ / "jobs", id);
  spec.kill_grace = 1s;
  spec.max_restarts = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    int pool = i == 0 ? 0 : 1;
    int replica = i == 0 ? 0 : static_cast<int>(i) - 1;
    spec.replicas.push_back(
        {pool, replica, "n1-standard-4", "", 0, harness_->Command(plans[i]), {}});
  }
  return spec;
}

GangStatus ExecutorConformanceTest::WaitFor(const std::string& id,
                                            const std::function<bool(const GangStatus&)>& pred) {
  GangStatus last;
  // At least 600 steps, and at least 60 s for harnesses whose steps wait for real processes (a
  // loaded CI machine can take long to start, stop and restart them): a hang guard, not a timing
  // requirement.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int i = 0; i < 600 || std::chrono::steady_clock::now() < deadline; ++i) {
    auto s = executor_->Get(id);
    if (s.ok()) {
      last = *s;
      if (pred(last)) return last;
    }
    harness_->Step();
  }
  ADD_FAILURE() << "job " << id << " never reached the expected state; last "
                << GangStateName(last.state) << " " << last.error_message;
  return last;
}

GangStatus ExecutorConformanceTest::WaitDone(const std::string& id) {
  return WaitFor(id, [](const GangStatus& s) { return GangLifecycle::IsTerminal(s.state); });
}

void ExecutorConformanceTest::Restart() {
  executor_->Shutdown();
  auto next = harness_->Make();
  executor_ = std::move(next);
}

std::string ExecutorConformanceTest::UserLogs(const std::string& id, int64_t after) {
  auto lines = executor_->ReadLogs(id, after, 1000);
  if (!lines.ok()) return lines.status().ToString();
  std::string out;
  for (const auto& l : *lines) {
    if (l.text.starts_with("[trainyard]")) continue;
    out += (out.empty() ? "" : " | ") + std::to_string(l.pool_index) + "-" +
           std::to_string(l.replica_index) + " " + l.text;
  }
  return out;
}

std::string ExecutorConformanceTest::Outcome(const GangStatus& s) {
  return GangStateName(s.state) + " " + GangFailureName(s.failure) + " " + s.error_message;
}

namespace {

ReplicaPlan Plan(std::string print, std::vector<int> attempts, std::string error = "") {
  return ReplicaPlan{std::move(print), std::move(attempts), std::move(error)};
}
constexpr int kUntilStopped = ReplicaPlan::kUntilStopped;

}  // namespace

// Every executor accepts and refuses the same machine specs, with the machine catalog's words
// (machines/machine_catalog.h): GPU machine families naming only their machine type, bundled GPUs
// that do not match, unknown and legacy names, TPUs. Harnesses give their world 8 GPUs of any
// model, so only the spec decides.
TEST_P(ExecutorConformanceTest, MachineSpecsAreAcceptedOrRefusedAlike) {
  struct Case {
    const char* machine;
    const char* accel;
    int count;
  };
  std::string got;
  for (const Case& c :
       {Case{"n1-standard-4", "", 0}, Case{"n1-standard-4", "NVIDIA_TESLA_T4", 2},
        Case{"a2-highgpu-1g", "", 0}, Case{"a2-ultragpu-2g", "", 0}, Case{"a3-highgpu-8g", "", 0},
        Case{"g2-standard-24", "NVIDIA_L4", 2}, Case{"a2-highgpu-2g", "NVIDIA_TESLA_T4", 1},
        Case{"g2-standard-4", "NVIDIA_L4", 2}, Case{"n1-standard-4", "TPU_V2", 8},
        Case{"n1-standard-4", "NVIDIA_TESLA_T4", 0}, Case{"n1-standard-4", "NVIDIA_TESLA_T5", 1},
        Case{"n9-huge", "", 0}, Case{"complex_model_m", "", 0}}) {
    GangSpec spec = Spec("machines", {Plan("", {0})});
    spec.replicas[0].machine_type = c.machine;
    spec.replicas[0].accelerator_type = c.accel;
    spec.replicas[0].accelerator_count = c.count;
    std::string result = executor_->Validate(spec).ToString();
    // The lists of valid names after "; use one of" are the catalog's; not repeated here.
    result = result.substr(0, result.find("; use one of"));
    got += std::string(c.machine) + " " + c.accel + " x" + std::to_string(c.count) + ": " + result +
           "\n";
  }
  EXPECT_EQ(got,
            "n1-standard-4  x0: OK\n"
            "n1-standard-4 NVIDIA_TESLA_T4 x2: OK\n"
            "a2-highgpu-1g  x0: OK\n"
            "a2-ultragpu-2g  x0: OK\n"
            "a3-highgpu-8g  x0: OK\n"
            "g2-standard-24 NVIDIA_L4 x2: OK\n"
            "a2-highgpu-2g NVIDIA_TESLA_T4 x1: INVALID_ARGUMENT: workerPoolSpecs[0].machineSpec: "
            "a2-highgpu-2g comes with 2 x NVIDIA_TESLA_A100; set acceleratorType NVIDIA_TESLA_A100 "
            "and acceleratorCount 2 (or leave both unset)\n"
            "g2-standard-4 NVIDIA_L4 x2: INVALID_ARGUMENT: workerPoolSpecs[0].machineSpec: "
            "g2-standard-4 comes with 1 x NVIDIA_L4; set acceleratorType NVIDIA_L4 and "
            "acceleratorCount 1 (or leave both unset)\n"
            "n1-standard-4 TPU_V2 x8: INVALID_ARGUMENT: "
            "workerPoolSpecs[0].machineSpec.acceleratorType: TPU_V2 is a Cloud TPU; TPUs are not "
            "supported by Trainyard, use a GPU type such as NVIDIA_TESLA_T4\n"
            "n1-standard-4 NVIDIA_TESLA_T4 x0: INVALID_ARGUMENT: "
            "workerPoolSpecs[0].machineSpec.acceleratorCount: must be >= 1 when acceleratorType "
            "NVIDIA_TESLA_T4 is set\n"
            "n1-standard-4 NVIDIA_TESLA_T5 x1: INVALID_ARGUMENT: "
            "workerPoolSpecs[0].machineSpec.acceleratorType: unknown accelerator "
            "'NVIDIA_TESLA_T5'\n"
            "n9-huge  x0: INVALID_ARGUMENT: workerPoolSpecs[0].machineSpec.machineType: unknown "
            "machine type 'n9-huge'\n"
            "complex_model_m  x0: INVALID_ARGUMENT: workerPoolSpecs[0].machineSpec.machineType: "
            "unknown machine type 'complex_model_m' ('complex_model_m' is an AI Platform legacy "
            "name; Vertex names it n1-highcpu-16)\n");
}

TEST_P(ExecutorConformanceTest, SubmitRunsToSucceededWithLogs) {
  GangSpec spec = Spec("ok", {Plan("hello from the chief", {0})});
  ASSERT_TRUE(executor_->Validate(spec).ok());
  ASSERT_TRUE(executor_->Submit(spec).ok());
  EXPECT_EQ(executor_->Submit(spec).code(), StatusCode::kAlreadyExists);
  GangStatus s = WaitDone("ok");
  auto first = executor_->ReadLogs("ok", -1, 1000);
  ASSERT_TRUE(first.ok());
  ASSERT_FALSE(first->empty());
  EXPECT_EQ(Outcome(s) + "| " + std::to_string(s.replicas.size()) + " " +
                std::to_string(s.replicas[0].exit_code.value_or(-1)) + " " +
                std::to_string(s.start_time.has_value() && s.end_time.has_value()) + " | " +
                UserLogs("ok") + " | after the last: '" + UserLogs("ok", first->back().offset) +
                "'",
            "SUCCEEDED NONE | 1 0 1 | 0-0 hello from the chief | after the last: ''");
}

TEST_P(ExecutorConformanceTest, FailingReplicaIsRetriedWithinTheBudget) {
  GangSpec spec = Spec("retry", {Plan("try", {3, 0})});
  spec.max_restarts = 2;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  GangStatus s = WaitDone("retry");
  EXPECT_EQ(Outcome(s) + "| restarts " + std::to_string(s.replicas[0].restarts) + " | " +
                UserLogs("retry"),
            "SUCCEEDED NONE | restarts 1 | 0-0 try | 0-0 try");
}

TEST_P(ExecutorConformanceTest, SpentBudgetFailsNamingTheReplicaAndRestarts) {
  GangSpec spec = Spec("spent", {Plan("", {3})});
  spec.max_restarts = 1;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  GangStatus s = WaitDone("spent");
  std::string m = s.error_message;
  EXPECT_EQ(GangStateName(s.state) + " " + GangFailureName(s.failure) + " " +
                std::to_string(m.starts_with("workerpool0 replica 0 exited with code 3")) +
                std::to_string(m.ends_with(" after 1 restart")),
            "FAILED REPLICA_FAILED 11")
      << m;
}

TEST_P(ExecutorConformanceTest, ConfigurationErrorFailsAtOnceWithItsReason) {
  // The worker exits 78 (replica_contract::kExitConfig) on its first attempt; a restart would
  // succeed, so a restart shows as a success here. The chief runs until it is stopped.
  GangSpec spec = Spec("config", {Plan("chief", {kUntilStopped}),
                                  Plan("", {78, 0}, "cannot write /out: mode 0755")});
  spec.max_restarts = 2;
  spec.restart_job_on_worker_restart = true;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  GangStatus s = WaitDone("config");
  const std::string want =
      "workerpool1 replica 0 exited with code 78 (a configuration error, not restarted): cannot "
      "write /out: mode 0755";
  EXPECT_EQ(GangStateName(s.state) + " " + GangFailureName(s.failure) + " " +
                std::to_string(s.error_message.starts_with(want)) + " restarts " +
                std::to_string(s.replicas[1].restarts),
            "FAILED CONFIG_ERROR 1 restarts 0")
      << s.error_message;
}

TEST_P(ExecutorConformanceTest, GangRestartStartsEveryReplicaAgain) {
  // The chief runs until stopped on its first attempt; the worker fails once.
  GangSpec spec = Spec("gang", {Plan("chief", {kUntilStopped, 0}), Plan("worker", {2, 0})});
  spec.max_restarts = 1;
  spec.restart_job_on_worker_restart = true;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  GangStatus s = WaitDone("gang");
  EXPECT_EQ(Outcome(s) + "| restarts " + std::to_string(s.replicas[0].restarts) + " " +
                std::to_string(s.replicas[1].restarts),
            "SUCCEEDED NONE | restarts 1 1");
}

// Issue #45: restarts wait for the restart backoff (default 1s doubling), and say so in the
// replica's status while they wait; none starts before its time.
TEST_P(ExecutorConformanceTest, RestartsWaitForTheirBackoff) {
  GangSpec spec = Spec("backoff", {Plan("", {3, 3, 0})});
  spec.max_restarts = 2;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  std::string notes;
  std::optional<std::chrono::system_clock::time_point> due;
  GangStatus s = WaitFor("backoff", [&](const GangStatus& st) {
    const ReplicaStatus& r = st.replicas[0];
    if (r.restart_at != due) {
      if (due && harness_->Now() < *due) notes += "started early! ";
      if (r.restart_at) notes += r.restart_note + " | ";
      due = r.restart_at;
    }
    return GangLifecycle::IsTerminal(st.state);
  });
  EXPECT_EQ(notes + Outcome(s),
            "restarting in 1s (restart 1 of 2) | restarting in 2s (restart 2 of 2) | SUCCEEDED "
            "NONE ");
}

TEST_P(ExecutorConformanceTest, CancelDuringTheBackoffEndsAtOnce) {
  GangSpec spec = Spec("waiting", {Plan("", {3, 0})});
  spec.max_restarts = 1;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  WaitFor("waiting", [](const GangStatus& s) { return s.replicas[0].restart_at.has_value(); });
  ASSERT_TRUE(executor_->Cancel("waiting").ok());
  GangStatus s = *executor_->Get("waiting");  // no step in between
  EXPECT_EQ(Outcome(s) + " | waits " + std::to_string(s.replicas[0].restart_at.has_value()),
            "CANCELLED CANCELLED cancelled | waits 0");
}

TEST_P(ExecutorConformanceTest, CancelWhileQueuedEndsAtOnce) {
  // The blocker takes this executor's room (where there is such a limit) so "queued" stays queued.
  ASSERT_TRUE(executor_->Submit(Spec("blocker", {Plan("", {kUntilStopped})})).ok());
  WaitFor("blocker", [](const GangStatus& s) { return s.state == GangState::kRunning; });
  ASSERT_TRUE(executor_->Submit(Spec("queued", {Plan("", {0})})).ok());
  std::string before = GangStateName(executor_->Get("queued")->state);
  ASSERT_TRUE(executor_->Cancel("queued").ok());
  GangStatus s = WaitDone("queued");
  ASSERT_TRUE(executor_->Cancel("queued").ok());  // again: a no-op
  EXPECT_EQ(before + " -> " + Outcome(s),
            "QUEUED -> CANCELLED CANCELLED cancelled before it started");
}

TEST_P(ExecutorConformanceTest, CancelWhileRunningStopsTheReplicas) {
  ASSERT_TRUE(executor_->Submit(Spec("run", {Plan("up", {kUntilStopped})})).ok());
  WaitFor("run", [](const GangStatus& s) { return s.state == GangState::kRunning; });
  ASSERT_TRUE(executor_->Cancel("run").ok());
  GangStatus s = WaitDone("run");
  EXPECT_EQ(Outcome(s) + "| pid " + std::to_string(s.replicas[0].pid),
            "CANCELLED CANCELLED cancelled| pid 0");
}

TEST_P(ExecutorConformanceTest, TimeoutFailsTheGang) {
  GangSpec spec = Spec("slow", {Plan("", {kUntilStopped})});
  spec.timeout = 1s;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  GangStatus s = WaitDone("slow");
  EXPECT_EQ(GangStateName(s.state) + " " + GangFailureName(s.failure) + " " +
                std::to_string(s.error_message.starts_with("timed out after 1s")),
            "FAILED TIMEOUT 1")
      << s.error_message;
}

TEST_P(ExecutorConformanceTest, UnknownIdsAreNotFound) {
  EXPECT_EQ(std::string(StatusCodeName(executor_->Get("nope").status().code())) + " " +
                std::string(StatusCodeName(executor_->Cancel("nope").code())) + " " +
                std::string(StatusCodeName(executor_->ReadLogs("nope", -1, 10).status().code())),
            "NOT_FOUND NOT_FOUND NOT_FOUND");
}

TEST_P(ExecutorConformanceTest, NewExecutorAdoptsRunningAndEndedGangs) {
  GangSpec ended = Spec("ended", {Plan("done before the restart", {0})});
  ASSERT_TRUE(executor_->Submit(ended).ok());
  WaitDone("ended");
  GangSpec running = Spec("adopted", {Plan("", {kUntilStopped})});
  ASSERT_TRUE(executor_->Submit(running).ok());
  WaitFor("adopted", [](const GangStatus& s) { return s.state == GangState::kRunning; });
  Restart();
  auto a = executor_->Adopt(running);
  auto e = executor_->Adopt(ended);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  std::string after_restart =
      GangStateName(a->state) + " " + GangStateName(e->state) + " | " + UserLogs("ended");
  ASSERT_TRUE(executor_->Cancel("adopted").ok());
  GangStatus s = WaitDone("adopted");
  EXPECT_EQ(after_restart + " | " + Outcome(s),
            "RUNNING SUCCEEDED | 0-0 done before the restart | CANCELLED CANCELLED cancelled");
}

}  // namespace trainyard::executor
