// trainyard-slurm-task without Slurm: the test sets the SLURM_* variables srun would and runs
// two ranks at once, so their rendezvous, environment, logs and exit codes are real.
#include "slurm/slurm_task.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "executor/job_dir_layout.h"
#include "executor/job_log.h"
#include "executor/replica_status_file.h"
#include "slurm/slurm_script.h"
#include "testing/test_util.h"

namespace trainyard::slurm {
namespace {

namespace fs = std::filesystem;

TEST(SlurmTaskTest, NodeAddressAndDeviceList) {
  std::string nodes = "n1 10.0.0.1\nn2 10.0.0.2\n";
  std::vector<int> devices = ParseDeviceList("0,3,GPU-abc");
  EXPECT_EQ(NodeAddress(nodes, "n2") + " " + NodeAddress(nodes, "n9") + " " +
                std::to_string(devices.size()) + std::to_string(devices[1]),
            "10.0.0.2 n9 23");
}

// One idle node, n1: 4 CPUs, 16000 MB.
SlurmNode IdleNode() {
  SlurmNode node;
  node.name = "n1";
  node.cpus = 4;
  node.memory_mb = 16000;
  node.state = "idle";
  return node;
}

TEST(SlurmTaskTest, TwoRanksRendezvousAndGetTheVertexEnvironment) {
  fs::path dir = trainyard::testing::MakeTestDir();
  executor::GangSpec spec;
  spec.job_id = "77";
  spec.job_dir = dir / "job";
  std::string cmd =
      "echo \"RANK=$RANK WORLD_SIZE=$WORLD_SIZE MASTER_ADDR=$MASTER_ADDR "
      "CUDA=[$CUDA_VISIBLE_DEVICES] PWD=$(basename $PWD) X=$X\"; "
      "echo \"$CLUSTER_SPEC\" > cluster.json; exit $((RANK * 3))";
  spec.replicas.push_back(
      {0, 0, "n1-standard-4", "", 0, {"/bin/sh", "-c", cmd}, {{"X", "$(RANK)"}}});
  spec.replicas.push_back({1, 0, "n1-standard-4", "", 0, {"/bin/sh", "-c", cmd}, {}});
  auto alloc = PlanAllocation(spec, machines::MachineCatalog::Default(), {IdleNode()}, "");
  ASSERT_TRUE(alloc.ok());
  fs::path attempt = executor::SlurmAttemptDir(spec.job_dir, 1);
  LaunchPlanSettings settings;
  settings.rendezvous_timeout = std::chrono::seconds(20);
  ASSERT_TRUE(
      WriteFileAtomic(attempt / "plan.json", RenderLaunchPlan(spec, *alloc, settings, 1, attempt))
          .ok());
  ASSERT_TRUE(WriteFileAtomic(attempt / "nodes", "n1 127.0.0.1\nn2 127.0.0.2\n").ok());
  auto run = [&](int rank, const std::string& node_name) {
    return trainyard::testing::RunProcess(
        {trainyard::testing::ToolPath("trainyard-slurm-task").string(), "--plan",
         (attempt / "plan.json").string()},
        "",
        {"SLURM_PROCID=" + std::to_string(rank), "SLURM_NTASKS=2", "SLURMD_NODENAME=" + node_name,
         "CUDA_VISIBLE_DEVICES="});
  };
  auto r1 = std::async(std::launch::async, run, 1, "n2");
  auto r0 = run(0, "n1");
  auto p1 = r1.get();
  std::string out;
  for (const char* task : {"workerpool0-0", "workerpool1-0"}) {
    auto lines = executor::ReadJobLog(attempt / task / "log", -1, 10);
    for (const auto& l : *lines) out += l.text + "\n";
  }
  auto cluster = nlohmann::json::parse(trainyard::testing::ReadFileOrDie(
      executor::ReplicaWorkDir(spec.job_dir, 1, 0) / "cluster.json"));
  std::string master = cluster["cluster"]["workerpool0"][0].get<std::string>();
  std::string worker = cluster["cluster"]["workerpool1"][0].get<std::string>();
  EXPECT_EQ(out + "exit " + std::to_string(r0.exit_code) + " " + std::to_string(p1.exit_code) +
                " " + master.substr(0, master.find(':')) + " " +
                worker.substr(0, worker.find(':')) + " " +
                cluster["task"]["type"].get<std::string>(),
            "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 CUDA=[] PWD=workerpool0-0 X=0\n"
            "RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 CUDA=[] PWD=workerpool1-0 X=\n"
            "exit 0 3 127.0.0.1 127.0.0.2 workerpool1")
      << r0.err << p1.err;
}

// The plan's run_as: the task (root under a root server's srun) runs the replica as that user,
// in a work dir it owns.
TEST(SlurmTaskTest, TheReplicaRunsAsThePlansUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching users needs root";
  fs::path dir = trainyard::testing::MakeTestDir();
  executor::GangSpec spec;
  spec.job_id = "78";
  spec.job_dir = dir / "job";
  spec.run_as = executor::RunAs{"nobody", 65534, 65534, {}, "/nonexistent", std::nullopt};
  spec.replicas.push_back({0,
                           0,
                           "n1-standard-4",
                           "",
                           0,
                           {"/bin/sh", "-c", "echo uid=$(id -u) user=$USER; touch mine"},
                           {}});
  auto alloc = PlanAllocation(spec, machines::MachineCatalog::Default(), {IdleNode()}, "");
  ASSERT_TRUE(alloc.ok());
  fs::path attempt = executor::SlurmAttemptDir(spec.job_dir, 1);
  ASSERT_TRUE(WriteFileAtomic(attempt / "plan.json",
                              RenderLaunchPlan(spec, *alloc, LaunchPlanSettings{}, 1, attempt))
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(attempt / "nodes", "n1 127.0.0.1\n").ok());
  auto r = trainyard::testing::RunProcess(
      {trainyard::testing::ToolPath("trainyard-slurm-task").string(), "--plan",
       (attempt / "plan.json").string()},
      "", {"SLURM_PROCID=0", "SLURM_NTASKS=1", "SLURMD_NODENAME=n1", "CUDA_VISIBLE_DEVICES="});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = executor::ReadJobLog(attempt / "workerpool0-0" / "log", -1, 10);
  ASSERT_TRUE(lines.ok());
  std::string out;
  for (const auto& l : *lines) out += l.text + "\n";
  EXPECT_EQ(out, "uid=65534 user=nobody\n");
  struct stat st {};
  ASSERT_EQ(::stat((executor::ReplicaWorkDir(spec.job_dir, 0, 0) / "mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
}

// An AI Platform Training job's TF_CONFIG names pool 0 "master" on Slurm too: the task builds the
// environment on its node, so the choice travels in the plan.
TEST(SlurmTaskTest, TheTfConfigRoleOfAnAiPlatformJobTravelsInThePlan) {
  fs::path dir = trainyard::testing::MakeTestDir();
  executor::GangSpec spec;
  spec.job_id = "79";
  spec.job_dir = dir / "job";
  spec.tf_config_primary_role = "master";
  spec.replicas.push_back({0, 0, "n1-standard-4", "", 0, {"/bin/sh", "-c", "echo $TF_CONFIG"}, {}});
  auto alloc = PlanAllocation(spec, machines::MachineCatalog::Default(), {IdleNode()}, "");
  ASSERT_TRUE(alloc.ok());
  fs::path attempt = executor::SlurmAttemptDir(spec.job_dir, 1);
  ASSERT_TRUE(WriteFileAtomic(attempt / "plan.json",
                              RenderLaunchPlan(spec, *alloc, LaunchPlanSettings{}, 1, attempt))
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(attempt / "nodes", "n1 127.0.0.1\n").ok());
  auto r = trainyard::testing::RunProcess(
      {trainyard::testing::ToolPath("trainyard-slurm-task").string(), "--plan",
       (attempt / "plan.json").string()},
      "", {"SLURM_PROCID=0", "SLURM_NTASKS=1", "SLURMD_NODENAME=n1", "CUDA_VISIBLE_DEVICES="});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = executor::ReadJobLog(attempt / "workerpool0-0" / "log", -1, 10);
  ASSERT_TRUE(lines.ok() && !lines->empty());
  auto tf = nlohmann::json::parse((*lines)[0].text, nullptr, false);
  ASSERT_TRUE(tf.is_object()) << (*lines)[0].text;
  EXPECT_EQ(std::to_string(tf["cluster"].contains("master")) + " " + tf["task"].value("type", ""),
            "1 master");
}

// An output dir the replica user cannot write (made by hand, root's, 0755) is a start error on
// the node, recorded for the executor, which then fails the gang instead of restarting it.
TEST(SlurmTaskTest, AnOutputDirTheUserCannotWriteIsRecordedAsAStartError) {
  if (::geteuid() != 0) GTEST_SKIP() << "replica users need root";
  fs::path dir = trainyard::testing::MakeTestDir();
  fs::create_directories(dir / "buckets/bkt/out");
  ::chmod((dir / "buckets/bkt/out").c_str(), 0755);
  executor::GangSpec spec;
  spec.job_id = "79";
  spec.job_dir = dir / "job";
  spec.base_output_dir = "gs://bkt/out";
  spec.run_as = executor::RunAs{"nobody", 65534, 65534, {}, "/nonexistent", std::nullopt};
  spec.replicas.push_back({0, 0, "n1-standard-4", "", 0, {"/bin/sh", "-c", "echo ran"}, {}});
  auto alloc = PlanAllocation(spec, machines::MachineCatalog::Default(), {IdleNode()}, "");
  ASSERT_TRUE(alloc.ok());
  fs::path attempt = executor::SlurmAttemptDir(spec.job_dir, 1);
  ASSERT_TRUE(WriteFileAtomic(attempt / "plan.json",
                              RenderLaunchPlan(spec, *alloc, LaunchPlanSettings{}, 1, attempt))
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(attempt / "nodes", "n1 127.0.0.1\n").ok());
  auto r = trainyard::testing::RunProcess(
      {trainyard::testing::ToolPath("trainyard-slurm-task").string(), "--plan",
       (attempt / "plan.json").string()},
      "",
      {"SLURM_PROCID=0", "SLURM_NTASKS=1", "SLURMD_NODENAME=n1",
       "CUDA_VISIBLE_DEVICES=", "TRAINYARD_BUCKET_ROOT=" + (dir / "buckets").string()});
  auto error = executor::ReadStartError(attempt / "workerpool0-0" / "pid");
  ASSERT_TRUE(error.ok()) << error.status() << " " << r.err;
  EXPECT_EQ(std::to_string(r.exit_code) + " " + executor::GangFailureName(error->failure) + " " +
                std::to_string(error->message.starts_with(
                    "user 'nobody' (uid 65534), who runs this job's replicas, cannot write " +
                    (dir / "buckets/bkt/out").string())) +
                " ran=" + std::to_string(fs::exists(attempt / "workerpool0-0" / "log")),
            "2 START_FAILED 1 ran=0")
      << error->message;
}

// A runtime that records the image it was asked to run (into `*image`: the task owns and ends
// the runtime) and ends the replica at once with exit 0.
class RecordingRuntime : public executor::ReplicaRuntime {
 public:
  explicit RecordingRuntime(std::string* image) : image_(image) {}
  std::string Name() const override { return "recording"; }
  Status CheckAvailable() const override { return Status::Ok(); }
  StatusOr<executor::ReplicaHandle> Start(const executor::ReplicaLaunch&) override {
    return UnimplementedError(
        "RecordingRuntime runs replicas in the foreground only, as the Slurm task does");
  }
  int RunInForeground(const executor::ReplicaLaunch& launch) override {
    *image_ = launch.image;
    return executor::WriteReplicaStatusFile(launch.status_file, 0).ok() ? 0 : 1;
  }
  executor::ReplicaObservation Observe(executor::ReplicaHandle*) override { return {}; }
  bool Terminate(const executor::ReplicaHandle&) override { return false; }
  bool Kill(const executor::ReplicaHandle&) override { return false; }
  StatusOr<int> OpenExitFd(const executor::ReplicaHandle&) override {
    return UnimplementedError(
        "RecordingRuntime runs replicas in the foreground only, as the Slurm task does");
  }
  bool Reap(const executor::ReplicaHandle&) override { return true; }

 private:
  std::string* image_;
};

// The server's --pull-timeout-seconds reaches a container task's runtime through plan.json, as
// the local executor's pulls get it from the server's runtime; a plan without one leaves the
// runtime's default.
TEST(SlurmTaskTest, AContainerTaskGetsThePlansPullTimeout) {
  fs::path dir = trainyard::testing::MakeTestDir();
  executor::GangSpec spec;
  spec.job_id = "78";
  spec.job_dir = dir / "job";
  spec.replicas.push_back({0, 0, "n1-standard-4", "", 0, {}, {}});
  spec.replicas[0].image = "trainyard/busybox";
  auto alloc = PlanAllocation(spec, machines::MachineCatalog::Default(), {IdleNode()}, "");
  ASSERT_TRUE(alloc.ok());
  fs::path attempt = executor::SlurmAttemptDir(spec.job_dir, 1);
  ASSERT_TRUE(WriteFileAtomic(attempt / "nodes", "n1 127.0.0.1\n").ok());
  std::string got;
  for (int seconds : {7, 0}) {
    LaunchPlanSettings settings;
    settings.rendezvous_timeout = std::chrono::seconds(20);
    settings.pull_timeout = std::chrono::seconds(seconds);
    fs::path plan = attempt / ("plan-" + std::to_string(seconds) + ".json");
    ASSERT_TRUE(WriteFileAtomic(plan, RenderLaunchPlan(spec, *alloc, settings, 1, attempt)).ok());
    (void)fs::remove_all(attempt / "rendezvous");
    std::string image = "-";
    std::chrono::milliseconds asked{-1};
    ::setenv("SLURM_PROCID", "0", 1);
    ::setenv("SLURM_NTASKS", "1", 1);
    ::setenv("SLURMD_NODENAME", "n1", 1);
    std::string plan_arg = plan.string();
    char* argv[] = {const_cast<char*>("trainyard-slurm-task"), const_cast<char*>("--plan"),
                    plan_arg.data(), nullptr};
    int rc = SlurmTaskMain(3, argv, [&](std::chrono::milliseconds pull_timeout) {
      asked = pull_timeout;
      return std::unique_ptr<executor::ReplicaRuntime>(std::make_unique<RecordingRuntime>(&image));
    });
    for (const char* v : {"SLURM_PROCID", "SLURM_NTASKS", "SLURMD_NODENAME"}) ::unsetenv(v);
    got += "exit " + std::to_string(rc) + " pull " + std::to_string(asked.count()) + "ms " + image +
           "\n";
  }
  EXPECT_EQ(got,
            "exit 0 pull 7000ms trainyard/busybox\n"
            "exit 0 pull 0ms trainyard/busybox\n");
}

TEST(SlurmTaskTest, WrongTaskCountIsAClearError) {
  fs::path dir = trainyard::testing::MakeTestDir();
  ASSERT_TRUE(WriteFileAtomic(dir / "plan.json",
                              "{\"attempt_dir\":\"" + dir.string() + "\",\"tasks\":[{}]}")
                  .ok());
  auto r =
      trainyard::testing::RunProcess({trainyard::testing::ToolPath("trainyard-slurm-task").string(),
                                      "--plan", (dir / "plan.json").string()},
                                     "", {"SLURM_PROCID=0", "SLURM_NTASKS=3"});
  EXPECT_EQ(std::to_string(r.exit_code) + " " + r.err,
            "2 trainyard-slurm-task: Slurm started 3 tasks (this is rank 0) but the plan has 1\n");
}

}  // namespace
}  // namespace trainyard::slurm
