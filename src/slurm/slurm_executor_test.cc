// SlurmExecutor against FakeSlurmClient: no Slurm, no sleeps; the test plays Slurm (job states)
// and the tasks (their status and log files), then runs one monitor round with PollOnce().
#include "slurm/slurm_executor.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "executor/job_dir_layout.h"
#include "executor/job_log.h"
#include "slurm/fake_slurm_client.h"
#include "slurm/slurm_script.h"
#include "testing/test_util.h"

namespace trainyard::slurm {
namespace {

namespace fs = std::filesystem;
using executor::GangSpec;
using executor::GangState;

class FakeClock : public executor::Clock {
 public:
  std::chrono::system_clock::time_point Now() const override { return now; }
  std::chrono::system_clock::time_point now{std::chrono::seconds(1'700'000'000)};
};

std::string Name(GangState s) {
  const char* names[] = {"QUEUED", "PENDING",    "RUNNING",  "SUCCEEDED",
                         "FAILED", "CANCELLING", "CANCELLED"};
  return names[static_cast<int>(s)];
}

class SlurmExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = trainyard::testing::MakeTestDir();
    SlurmNode n;
    n.name = "n1";
    n.partitions = {"debug"};
    n.default_partition = true;
    n.cpus = 8;
    n.memory_mb = 32000;
    n.state = "idle";
    SlurmNode n2 = n;
    n2.name = "n2";
    client_.SetNodes({n, n2});
    executor_ = Make();
  }

  std::unique_ptr<SlurmExecutor> Make() {
    SlurmExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.partition = "";
    o.task_binary = "/bin/true";
    o.client = &client_;
    o.clock = &clock_;
    o.start_monitor = false;
    auto e = std::make_unique<SlurmExecutor>(o);
    e->SetListener([this](const executor::GangStatus& s) { seen_ += Name(s.state) + " "; });
    return e;
  }

  GangSpec Spec(const std::string& id, int max_restarts = 0) {
    GangSpec g;
    g.job_id = id;
    g.job_dir = dir_ / "jobs" / id;
    g.max_restarts = max_restarts;
    g.kill_grace = std::chrono::seconds(10);
    g.replicas.push_back({0, 0, "n1-standard-4", "", 0, {"/bin/sh", "-c", "exit 0"}, {}});
    g.replicas.push_back({1, 0, "n1-standard-4", "", 0, {"/bin/sh", "-c", "exit 0"}, {}});
    return g;
  }

  // What a task writes when its replica ends (trainyard-exec-wrapper's status file).
  // `end_time`: the exit's time as the wrapper records it; "" = none (older task launchers).
  void TaskExited(const std::string& id, int attempt, int pool, int code,
                  const std::string& end_time = "") {
    fs::path f =
        executor::SlurmTaskDir(executor::SlurmAttemptDir(dir_ / "jobs" / id, attempt), pool, 0) /
        "status";
    std::string status = "{\"exit_code\":" + std::to_string(code);
    if (!end_time.empty()) status += ",\"end_time\":\"" + end_time + "\"";
    ASSERT_TRUE(WriteFileAtomic(f, status + "}").ok());
  }

  std::string Status(const std::string& id) {
    auto s = executor_->Get(id);
    if (!s.ok()) return s.status().ToString();
    return Name(s->state) + (s->error_message.empty() ? "" : ": " + s->error_message);
  }

  std::string LogText(const std::string& id) {
    std::string text;
    auto lines = executor_->ReadLogs(id, -1, 1000);
    for (const auto& l : *lines) text += l.text + "\n";
    return text;
  }

  fs::path dir_;
  FakeSlurmClient client_;
  FakeClock clock_;
  std::string seen_;
  std::unique_ptr<SlurmExecutor> executor_;
};

// /metrics' probe (trainyard_executor_up): sinfo answers through the given client; with the real
// commands and no sinfo where they should be, the probe says what failed.
TEST_F(SlurmExecutorTest, CheckReachableAsksSinfo) {
  SlurmExecutorOptions o;
  o.data_dir = dir_ / "data";
  o.slurm_bin_dir = dir_ / "no-slurm-here";
  o.start_monitor = false;
  SlurmExecutor unreachable(o);
  EXPECT_EQ(executor_->CheckReachable().ToString() + " | " +
                std::string(StatusCodeName(unreachable.CheckReachable().code())),
            "OK | UNAVAILABLE");
}

// /metrics' capacity of the cluster: the partition's usable nodes, from the same sinfo.
TEST_F(SlurmExecutorTest, ProbeCapacityCountsThePartitionsUsableNodes) {
  auto capacity = executor_->ProbeCapacity();
  ASSERT_TRUE(capacity.ok() && capacity->has_value()) << capacity.status();
  const executor::Executor::ClusterCapacity& c = **capacity;
  EXPECT_GT(c.nodes, 0);
  EXPECT_LE(c.usable_nodes, c.nodes);
  EXPECT_GT(c.cpus, 0);
  SlurmExecutorOptions o;
  o.data_dir = dir_ / "data";
  o.slurm_bin_dir = dir_ / "no-slurm-here";
  o.start_monitor = false;
  SlurmExecutor unreachable(o);
  EXPECT_EQ(unreachable.ProbeCapacity().status().code(), StatusCode::kUnavailable);
}

TEST_F(SlurmExecutorTest, RunsThroughSlurmStatesToSuccess) {
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  std::string id = client_.submissions().at(0).job_id;
  client_.SetJob(id, "PENDING", "", "Resources");
  executor_->PollOnce();
  client_.SetJob(id, "RUNNING", "", "None", "n[1-2]");
  executor_->PollOnce();
  TaskExited("1", 1, 0, 0);
  TaskExited("1", 1, 1, 0);
  client_.SetJob(id, "COMPLETED", "0:0");
  executor_->PollOnce();
  EXPECT_EQ(seen_ + "| " + Status("1"), "QUEUED RUNNING RUNNING SUCCEEDED | SUCCEEDED");
  EXPECT_NE(LogText("1").find("[trainyard] Slurm job 100: PENDING (Resources)"), std::string::npos)
      << LogText("1");
}

TEST_F(SlurmExecutorTest, SubmitWritesScriptAndPlanAndRejectsDuplicates) {
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  auto sub = client_.submissions().at(0);
  bool plan = fs::exists(sub.script_path.parent_path() / "plan.json");
  EXPECT_EQ(sub.script_path.string().substr(dir_.string().size()) +
                " plan=" + std::to_string(plan) + " " + executor_->Submit(Spec("1")).ToString(),
            "/jobs/1/slurm/attempt-1/job.sbatch plan=1 ALREADY_EXISTS: job 1 was already "
            "submitted");
  EXPECT_NE(sub.script.find("#SBATCH --ntasks=2\n"), std::string::npos) << sub.script;
}

TEST_F(SlurmExecutorTest, SbatchFailureIsReturnedAndNothingIsKept) {
  client_.SetSubmitError(UnavailableError("sbatch: error: Batch job submission failed"));
  trainyard::Status s = executor_->Submit(Spec("1"));
  EXPECT_EQ(s.ToString() + " | " + Status("1"),
            "UNAVAILABLE: sbatch: error: Batch job submission failed | NOT_FOUND: job 1 is not "
            "known to this executor");
}

// slurmctld down at create: the job is accepted and waits QUEUED with the reason; once it
// answers, the job is looked up by name (never submitted twice) and submitted. A request Slurm
// refuses is still an error at once.
// The server's --pull-timeout-seconds (ExecutorConfig::pull_timeout) goes into every attempt's
// plan.json, where the tasks' container runtime reads it (slurm_task_test.cc).
TEST_F(SlurmExecutorTest, ThePullTimeoutTravelsInThePlan) {
  SlurmExecutorOptions o;
  o.data_dir = dir_ / "data";
  o.task_binary = "/bin/true";
  o.client = &client_;
  o.clock = &clock_;
  o.start_monitor = false;
  o.pull_timeout = std::chrono::seconds(5);
  SlurmExecutor executor(o);
  ASSERT_TRUE(executor.Submit(Spec("p")).ok());
  auto plan = ReadFile(executor::SlurmAttemptDir(dir_ / "jobs" / "p", 1) / "plan.json");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(nlohmann::json::parse(*plan).value("pull_timeout_ms", -1), 5000);
}

// slurmctld down already for the sinfo that plans the allocation (what a real outage does first):
// the create is still accepted (Validate checks what needs no nodes), waits QUEUED, and is
// planned and submitted once slurmctld answers.
TEST_F(SlurmExecutorTest, AControllerDownAtPlanningLeavesTheJobQueuedUntilItAnswers) {
  const auto down = UnavailableError(
      "sinfo failed (exit code 1): slurm_load_partitions: Unable to contact slurm controller "
      "(connect failure)");
  client_.SetNodesError(down);
  client_.SetQueryError(down);
  ASSERT_TRUE(executor_->Validate(Spec("1")).ok());
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  executor_->PollOnce();
  auto waiting = executor_->Get("1");
  ASSERT_TRUE(waiting.ok());
  const std::string before = GangStateName(waiting->state) + " | " + waiting->waiting_note + " | " +
                             std::to_string(client_.submissions().size());
  client_.SetNodesError(trainyard::Status::Ok());
  client_.SetQueryError(trainyard::Status::Ok());
  executor_->PollOnce();
  EXPECT_EQ(before + " / " + std::to_string(client_.submissions().size()),
            "QUEUED | waiting for the Slurm controller: " + down.message() +
                "; submitting when it answers | 0 / 1");
}

TEST_F(SlurmExecutorTest, AControllerThatDoesNotAnswerLeavesTheJobQueuedUntilItDoes) {
  const auto down = UnavailableError(
      "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect "
      "failure)");
  client_.SetSubmitError(down);
  client_.SetQueryError(UnavailableError("squeue: error: Unable to contact slurm controller"));
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  auto waiting = executor_->Get("1");
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(GangStateName(waiting->state) + " | " + waiting->waiting_note,
            "QUEUED | waiting for the Slurm controller: " + down.message() +
                "; submitting when it answers");
  executor_->PollOnce();
  executor_->PollOnce();
  EXPECT_EQ(client_.submissions().size(), 0u);
  client_.SetSubmitError(trainyard::Status::Ok());
  client_.SetQueryError(trainyard::Status::Ok());
  executor_->PollOnce();
  ASSERT_EQ(client_.submissions().size(), 1u);
  client_.SetJob(client_.submissions().at(0).job_id, "RUNNING");
  executor_->PollOnce();
  auto running = executor_->Get("1");
  EXPECT_EQ(GangStateName(running->state) + " | " + running->waiting_note, "RUNNING | ");
  EXPECT_NE(LogText("1").find("[trainyard] waiting for the Slurm controller"), std::string::npos)
      << LogText("1");

  client_.SetSubmitError(InvalidArgumentError("sbatch: error: Invalid partition name specified"));
  EXPECT_EQ(executor_->Submit(Spec("2")).code(), StatusCode::kInvalidArgument);
}

TEST_F(SlurmExecutorTest, TerminalStatesMapToJobStatesWithReasons) {
  struct Case {
    std::string slurm, exit;
    int worker_code;
  };
  std::vector<Case> cases = {
      {"FAILED", "3:0", 3},     {"NODE_FAIL", "0:0", -1},  {"OUT_OF_MEMORY", "0:125", 137},
      {"TIMEOUT", "0:15", 143}, {"PREEMPTED", "0:15", -1}, {"CANCELLED", "0:15", -1}};
  std::string out;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string job = "m" + std::to_string(i);
    GangSpec spec = Spec(job);
    spec.timeout = std::chrono::seconds(600);
    ASSERT_TRUE(executor_->Submit(spec).ok());
    std::string id = client_.submissions().back().job_id;
    client_.SetJob(id, "RUNNING");
    executor_->PollOnce();
    if (cases[i].worker_code >= 0) TaskExited(job, 1, 1, cases[i].worker_code);
    client_.SetJob(id, cases[i].slurm, cases[i].exit);
    executor_->PollOnce();
    out += cases[i].slurm + " -> " + Status(job) + "\n";
  }
  EXPECT_EQ(out,
            "FAILED -> FAILED: workerpool1 replica 0 exited with code 3 (Slurm job 100 FAILED, "
            "exit code 3:0)\n"
            "NODE_FAIL -> FAILED: workerpool0 replica 0 ended without a recorded exit code (Slurm "
            "job 101 NODE_FAIL, exit code 0:0; node failure: a node of the job stopped answering "
            "slurmctld: slurmd lost or the node down)\n"
            "OUT_OF_MEMORY -> FAILED: workerpool1 replica 0 exited with code 137 (Slurm job 102 "
            "OUT_OF_MEMORY, exit code 0:125)\n"
            "TIMEOUT -> FAILED: timed out after 600s (Slurm job 103 TIMEOUT, exit code 0:15)\n"
            "PREEMPTED -> FAILED: workerpool0 replica 0 ended without a recorded exit code (Slurm "
            "job 104 PREEMPTED, exit code 0:15)\n"
            "CANCELLED -> CANCELLED: cancelled outside Trainyard (scancel or a Slurm "
            "administrator; Slurm job 105 CANCELLED, exit code 0:15)\n");
}

TEST_F(SlurmExecutorTest, FailureRestartsTheGangAsANewSlurmJobWhileBudgetLasts) {
  ASSERT_TRUE(executor_->Submit(Spec("1", /*max_restarts=*/1)).ok());
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  TaskExited("1", 1, 1, 2);
  client_.SetJob("100", "PREEMPTED", "0:15");
  executor_->PollOnce();  // restart decided; it waits for the backoff (1 s)
  ASSERT_EQ(client_.submissions().size(), 1u);
  clock_.now += std::chrono::seconds(1);
  executor_->PollOnce();  // attempt 2 submitted
  ASSERT_EQ(client_.submissions().size(), 2u);
  client_.SetJob("101", "RUNNING");
  executor_->PollOnce();
  TaskExited("1", 2, 1, 4);
  client_.SetJob("101", "FAILED", "4:0");
  executor_->PollOnce();
  EXPECT_EQ(Status("1") + " | attempt 2 dir: " +
                client_.submissions().at(1).script_path.parent_path().filename().string(),
            "FAILED: workerpool1 replica 0 exited with code 4 (Slurm job 101 FAILED, exit code "
            "4:0) after 1 restart | attempt 2 dir: attempt-2");
}

// trainyard-slurm-task's container runtime leaves a start-error file when the image cannot be
// pulled: the gang fails for that reason (IMAGE_UNAVAILABLE), without a restart.
TEST_F(SlurmExecutorTest, ATaskWhoseImageCannotBePulledFailsTheGangWithoutRestart) {
  ASSERT_TRUE(executor_->Submit(Spec("1", /*max_restarts=*/2)).ok());
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  const fs::path task =
      executor::SlurmTaskDir(executor::SlurmAttemptDir(dir_ / "jobs" / "1", 1), 1, 0);
  ASSERT_TRUE(WriteFileAtomic(task / "pid.container-error",
                              R"({"failure":"IMAGE_UNAVAILABLE","message":"image )"
                              R"('eu.gcr.io/p/x:1' cannot be pulled: manifest unknown"})")
                  .ok());
  TaskExited("1", 1, 1, 125);
  client_.SetJob("100", "FAILED", "125:0");
  executor_->PollOnce();
  auto s = executor_->Get("1");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(executor::GangFailureName(s->failure) + " | " + Status("1") + " | " +
                std::to_string(client_.submissions().size()),
            "IMAGE_UNAVAILABLE | FAILED: workerpool1 replica 0 could not be started: image "
            "'eu.gcr.io/p/x:1' cannot be pulled: manifest unknown (Slurm job 100 FAILED, exit "
            "code 125:0) | 1");
}

TEST_F(SlurmExecutorTest, PrimarySuccessStopsTheOtherReplicas) {
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  TaskExited("1", 1, 0, 0);
  executor_->PollOnce();                     // chief done, worker still running: SIGTERM the steps
  client_.SetJob("100", "FAILED", "143:0");  // the worker died of SIGTERM
  executor_->PollOnce();
  EXPECT_EQ(Status("1") + " | " + client_.cancels().at(0), "SUCCEEDED | 100:TERM");
}

TEST_F(SlurmExecutorTest, CancelSendsTermThenScancelAfterGrace) {
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  ASSERT_TRUE(executor_->Cancel("1").ok());
  std::string mid = Status("1");
  clock_.now += std::chrono::seconds(5);
  executor_->PollOnce();  // within kill_grace: nothing more
  clock_.now += std::chrono::seconds(6);
  executor_->PollOnce();  // grace over: plain scancel
  client_.SetJob("100", "CANCELLED", "0:15");
  executor_->PollOnce();
  std::string cancels;
  for (const auto& c : client_.cancels()) cancels += c + " ";
  EXPECT_EQ(mid + " | " + cancels + "| " + Status("1") + " | " + executor_->Cancel("1").ToString() +
                " " + executor_->Cancel("nope").ToString(),
            "CANCELLING | 100:TERM 100 | CANCELLED: cancelled | OK NOT_FOUND: job nope is not "
            "known to this executor");
}

TEST_F(SlurmExecutorTest, CancelWhileQueuedEndsAtOnce) {
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  ASSERT_TRUE(executor_->Cancel("1").ok());
  EXPECT_EQ(Status("1") + " | " + client_.cancels().at(0),
            "CANCELLED: cancelled before it started | 100");
}

TEST_F(SlurmExecutorTest, AdoptReattachesBySlurmJobIdAfterRestart) {
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  executor_->Shutdown();
  executor_ = Make();  // "server restart"
  auto adopted = executor_->Adopt(Spec("1"));
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  std::string before = Name(adopted->state);
  TaskExited("1", 1, 0, 0);
  TaskExited("1", 1, 1, 0);
  client_.SetJob("100", "COMPLETED", "0:0");
  executor_->PollOnce();
  EXPECT_EQ(
      before + " " + Status("1") + " submissions=" + std::to_string(client_.submissions().size()),
      "RUNNING SUCCEEDED submissions=1");
  // A job that ended before the restart is answered from its state file.
  executor_ = Make();
  EXPECT_EQ(Status("1"), "SUCCEEDED");
}

// The server dies after sbatch returned but before the Slurm job id was persisted. The
// hook copies the job dir at that instant; the "restarted server" sees exactly that copy.
class SlurmCrashTest : public SlurmExecutorTest {
 protected:
  void CrashAtNextSbatch(const std::string& job) {
    client_.SetAfterSubmitHook([this, job] {
      fs::remove_all(dir_ / "crash-image");
      fs::copy(dir_ / "jobs" / job, dir_ / "crash-image", fs::copy_options::recursive);
    });
  }
  // Stops the old executor, puts the job dir back as it was at the crash, starts a new one.
  void Restart(const std::string& job) {
    client_.SetAfterSubmitHook(nullptr);
    executor_->Shutdown();
    executor_.reset();
    fs::remove_all(dir_ / "jobs" / job);
    fs::rename(dir_ / "crash-image", dir_ / "jobs" / job);
    executor_ = Make();
  }
  std::string Submissions() {
    std::string out;
    for (const auto& s : client_.submissions()) {
      out += s.job_id + ":" + s.script_path.parent_path().filename().string() + " ";
    }
    return out;
  }
};

TEST_F(SlurmCrashTest, CrashAfterSbatchFindsTheJobInsteadOfSubmittingAgain) {
  CrashAtNextSbatch("1");
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  Restart("1");
  auto adopted = executor_->Adopt(Spec("1"));
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  EXPECT_EQ(Submissions() + "| " + Status("1"), "100:attempt-1 | RUNNING");
  EXPECT_NE(LogText("1").find("found Slurm job 100 (trainyard-1-1) submitted before the restart"),
            std::string::npos)
      << LogText("1");
}

TEST_F(SlurmCrashTest, CrashAfterSbatchOfARestartFindsThatAttempt) {
  ASSERT_TRUE(executor_->Submit(Spec("1", /*max_restarts=*/1)).ok());
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  TaskExited("1", 1, 1, 2);
  client_.SetJob("100", "FAILED", "2:0");
  executor_->PollOnce();  // the restart waits for its backoff
  clock_.now += std::chrono::seconds(1);
  CrashAtNextSbatch("1");
  executor_->PollOnce();  // attempt 2 goes to sbatch; the server dies right after
  Restart("1");
  ASSERT_TRUE(executor_->Adopt(Spec("1", 1)).ok());
  client_.SetJob("101", "RUNNING");
  executor_->PollOnce();
  TaskExited("1", 2, 0, 0);
  TaskExited("1", 2, 1, 0);
  client_.SetJob("101", "COMPLETED", "0:0");
  executor_->PollOnce();
  EXPECT_EQ(Submissions() + "| " + Status("1"), "100:attempt-1 101:attempt-2 | SUCCEEDED");
}

TEST_F(SlurmCrashTest, MarkerWithoutASlurmJobSubmitsThatAttemptOnce) {
  CrashAtNextSbatch("1");
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  client_.SetJob("100", "");  // sbatch never reached slurmctld: Slurm knows no such job
  Restart("1");
  ASSERT_TRUE(executor_->Adopt(Spec("1")).ok());
  executor_->PollOnce();
  executor_->PollOnce();
  EXPECT_EQ(Submissions() + "| " + Status("1"), "100:attempt-1 101:attempt-1 | QUEUED");
}

TEST_F(SlurmCrashTest, SlurmUnreachableAfterTheCrashKeepsAskingAndNeverResubmits) {
  CrashAtNextSbatch("1");
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  Restart("1");
  client_.SetQueryError(UnavailableError("squeue: error: slurm_load_jobs: Unable to contact"));
  ASSERT_TRUE(executor_->Adopt(Spec("1")).ok());
  executor_->PollOnce();
  executor_->PollOnce();
  std::string while_down = Submissions();
  client_.SetQueryError(trainyard::Status::Ok());
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  EXPECT_EQ(while_down + "| " + Submissions() + "| " + Status("1"),
            "100:attempt-1 | 100:attempt-1 | RUNNING");
}

TEST_F(SlurmExecutorTest, JobPurgedFromSlurmIsJudgedByItsTasks) {
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  client_.SetJob("100", "RUNNING");
  executor_->PollOnce();
  TaskExited("1", 1, 0, 1);
  client_.SetJob("100", "");  // gone: no squeue entry, no accounting
  for (int i = 0; i < 3; ++i) executor_->PollOnce();
  EXPECT_EQ(Status("1"),
            "FAILED: workerpool0 replica 0 exited with code 1 (Slurm job 100 is no longer known "
            "to Slurm (squeue/sacct))");
}

TEST_F(SlurmExecutorTest, TaskLogsAreCopiedIntoTheJobLogWithCursors) {
  ASSERT_TRUE(executor_->Submit(Spec("1")).ok());
  client_.SetJob("100", "RUNNING");
  fs::path task_log =
      executor::SlurmTaskDir(executor::SlurmAttemptDir(dir_ / "jobs" / "1", 1), 1, 0) / "log";
  ASSERT_TRUE(executor::AppendJobLog(task_log, {}, {{clock_.now, 1, 0, false, "hello"}}).ok());
  executor_->PollOnce();
  ASSERT_TRUE(executor::AppendJobLog(task_log, {}, {{clock_.now, 1, 0, true, "world"}}).ok());
  executor_->PollOnce();
  executor_->PollOnce();  // nothing new: no duplicates
  std::string replica_lines;
  auto lines = executor_->ReadLogs("1", -1, 1000);
  for (const auto& l : *lines) {
    if (l.pool_index == 1) replica_lines += l.text + (l.is_stderr ? "(E) " : " ");
  }
  EXPECT_EQ(replica_lines, "hello world(E) ");
}

TEST_F(SlurmExecutorTest, ValidateRefusesImagesWithoutAContainerRuntime) {
  GangSpec spec = Spec("c");
  spec.replicas[0].image = "eu.gcr.io/p/trainer:dev";
  spec.replicas[0].image_field = "containerSpec.imageUri";
  trainyard::Status s = executor_->Validate(spec);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      s.message().starts_with("workerPoolSpecs[0].containerSpec.imageUri: image "
                              "'eu.gcr.io/p/trainer:dev' would run as a container"))
      << s;
}

TEST_F(SlurmExecutorTest, ValidateUsesThePartitionsNodes) {
  GangSpec gpu = Spec("g");
  gpu.replicas[0].accelerator_type = "NVIDIA_TESLA_T4";
  gpu.replicas[0].accelerator_count = 1;
  GangSpec bad_id = Spec("a/b");
  EXPECT_EQ(executor_->Validate(gpu).message() + "\n" + executor_->Validate(bad_id).message(),
            "workerPoolSpecs[0]: NVIDIA_TESLA_T4 x1 requested but the largest node of the "
            "default partition has no GPU (GRES gpu)\n"
            "job id 'a/b' must be 1-200 characters of letters, digits, '-', '_' or '.'");
}

// Issue #45: a failed attempt is resubmitted after the restart backoff, counted from the task's
// exit; the wait is in slurm_state.json, so a server restart during it keeps it.
TEST_F(SlurmExecutorTest, ResubmissionWaitsForTheBackoffAcrossAServerRestart) {
  ASSERT_TRUE(executor_->Submit(Spec("b", /*max_restarts=*/2)).ok());
  std::string id = client_.submissions().at(0).job_id;
  client_.SetJob(id, "RUNNING", "", "None", "n1");
  executor_->PollOnce();
  TaskExited("b", 1, 0, 3, executor::FormatLogTime(clock_.now));
  client_.SetJob(id, "FAILED", "3:0");
  executor_->PollOnce();
  auto note = [&] {
    auto s = executor_->Get("b");
    return Name(s->state) + " sbatch " + std::to_string(client_.submissions().size()) + " '" +
           s->replicas[0].restart_note + "'";
  };
  std::string seen = note();
  executor_ = Make();  // the server restarts
  ASSERT_TRUE(executor_->Adopt(Spec("b", 2)).ok());
  executor_->PollOnce();
  seen += " | adopted: " + note();
  clock_.now += std::chrono::seconds(1);
  executor_->PollOnce();
  seen += " | +1s: " + note();
  EXPECT_EQ(seen,
            "RUNNING sbatch 1 'restarting in 1s (restart 1 of 2)' | adopted: RUNNING sbatch 1 "
            "'restarting in 1s (restart 1 of 2)' | +1s: RUNNING sbatch 2 ''");
}

// A Slurm job that ended while the server was down ends when its last task exited.
TEST_F(SlurmExecutorTest, AJobThatEndedWhileTheServerWasDownEndsAtTheLastExit) {
  ASSERT_TRUE(executor_->Submit(Spec("d")).ok());
  std::string id = client_.submissions().at(0).job_id;
  client_.SetJob(id, "RUNNING", "", "None", "n1");
  executor_->PollOnce();
  const auto started = clock_.now;
  executor_.reset();  // the server stops
  TaskExited("d", 1, 1, 0, executor::FormatLogTime(started + std::chrono::seconds(3)));
  TaskExited("d", 1, 0, 0, executor::FormatLogTime(started + std::chrono::seconds(7)));
  client_.SetJob(id, "COMPLETED", "0:0");
  clock_.now += std::chrono::hours(1);
  executor_ = Make();
  ASSERT_TRUE(executor_->Adopt(Spec("d")).ok());
  executor_->PollOnce();
  auto s = executor_->Get("d");
  EXPECT_EQ(Name(s->state) + " ended +" +
                std::to_string((*s->end_time - started) / std::chrono::seconds(1)) + "s",
            "SUCCEEDED ended +7s");
}

}  // namespace
}  // namespace trainyard::slurm
