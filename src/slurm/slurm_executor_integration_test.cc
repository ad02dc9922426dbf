// SlurmExecutor through a real Slurm cluster: starts nothing itself. Bring one up with
//   bash scripts/slurm-local.sh start --nodes 2
// (2 fake nodes on this host; also runs on 1 node, where the gang is shrunk to fit and pools of
// different machine types fall back to one homogeneous allocation). Without a cluster with an
// idle node every test is skipped.
#include <gtest/gtest.h>

#include <cstdio>
#include <thread>

#include "slurm/slurm_executor.h"
#include "testing/test_util.h"

namespace trainyard::slurm {
namespace {

namespace fs = std::filesystem;
using executor::GangSpec;
using executor::GangState;
using Clock = std::chrono::steady_clock;

// "" when a cluster with 2 idle nodes is there. Nodes still finishing the previous test's job
// (completing/mixed) get a few seconds to become idle again.
int g_usable_nodes = 0;

std::string SkipReason() {
  // Without a cluster every test would wait for sinfo again: ask once per process.
  static const bool no_cluster = [] {
    CliSlurmClient probe(CommandRunner::Real(), {{}, std::chrono::milliseconds(5000), true});
    return !probe.Nodes("").ok();
  }();
  CliSlurmClient client(CommandRunner::Real(), {{}, std::chrono::milliseconds(5000), true});
  if (no_cluster) {
    return "no Slurm cluster (sinfo fails); start one with: bash scripts/slurm-local.sh start "
           "--nodes 2";
  }
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (true) {
    auto nodes = client.Nodes("");
    if (!nodes.ok()) {
      return "no Slurm cluster (" + nodes.status().message() +
             "); start one with: bash scripts/slurm-local.sh start --nodes 2";
    }
    int idle = 0, usable = 0;
    for (const auto& n : *nodes) {
      idle += n.state == "idle" ? 1 : 0;
      usable += n.Usable() ? 1 : 0;
    }
    g_usable_nodes = usable;
    if (idle >= 1 && idle == usable) return "";
    if (usable < 1 || Clock::now() > deadline) {
      return "the Slurm cluster has no idle node; start one with: bash scripts/slurm-local.sh "
             "start --nodes 2";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

class SlurmExecutorIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip = SkipReason();
    if (!skip.empty()) GTEST_SKIP() << skip;
    dir_ = trainyard::testing::MakeTestDir();
    SlurmExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.poll_interval = std::chrono::milliseconds(200);
    o.rendezvous_timeout = std::chrono::seconds(60);
    executor_ = std::make_unique<SlurmExecutor>(o);
    executor_->SetListener([this](const executor::GangStatus& s) {
      std::lock_guard<std::mutex> lock(mu_);
      if (s.state == GangState::kRunning && !running_at_) running_at_ = Clock::now();
    });
  }

  // Two replicas (chief + 1 worker), n1-standard-2 each: 2 CPUs, so one per fake node.
  GangSpec Spec(const std::string& id, const std::string& chief, const std::string& worker) {
    GangSpec g;
    g.job_id = id;
    g.job_dir = dir_ / "jobs" / id;
    g.max_restarts = 0;
    g.kill_grace = std::chrono::seconds(5);
    g.replicas.push_back({0, 0, "n1-standard-2", "", 0, {"/bin/sh", "-c", chief}, {}});
    g.replicas.push_back({1, 0, "n1-standard-2", "", 0, {"/bin/sh", "-c", worker}, {}});
    return g;
  }

  executor::GangStatus WaitFor(const std::string& id, std::function<bool(GangState)> done,
                               int seconds = 90) {
    auto deadline = Clock::now() + std::chrono::seconds(seconds);
    while (Clock::now() < deadline) {
      auto s = executor_->Get(id);
      if (s.ok() && done(s->state)) return *s;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "job " << id << " did not reach the expected state in " << seconds << "s";
    return *executor_->Get(id);
  }
  static bool Terminal(GangState s) {
    return s == GangState::kSucceeded || s == GangState::kFailed || s == GangState::kCancelled;
  }

  std::string Logs(const std::string& id) {
    std::string text;
    auto lines = executor_->ReadLogs(id, -1, 10000);
    for (const auto& l : *lines) {
      text += std::to_string(l.pool_index) + " " + l.text + "\n";
    }
    return text;
  }

  fs::path dir_;
  std::unique_ptr<SlurmExecutor> executor_;
  std::mutex mu_;
  std::optional<Clock::time_point> running_at_;
};

const char kShowEnv[] =
    "echo \"rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT node=$SLURMD_NODENAME\"; "
    "echo \"spec=$CLUSTER_SPEC\" | sed 's/\"job\":.*//'";

TEST_F(SlurmExecutorIntegrationTest, TwoReplicaGangSeesItsRolesAndSucceeds) {
  auto submitted = Clock::now();
  // The chief lingers: its exit ends the gang, which would stop a worker that has not printed yet.
  ASSERT_TRUE(executor_->Submit(Spec("ok", std::string(kShowEnv) + "; sleep 1", kShowEnv)).ok());
  auto end = WaitFor("ok", Terminal);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_at_) {
      std::printf("submit->RUNNING %.2f s, submit->SUCCEEDED %.2f s\n",
                  std::chrono::duration<double>(*running_at_ - submitted).count(),
                  std::chrono::duration<double>(Clock::now() - submitted).count());
    }
  }
  std::string logs = Logs("ok");
  EXPECT_EQ(executor::GangState::kSucceeded, end.state) << end.error_message << "\n" << logs;
  EXPECT_NE(logs.find("0 rank=0 world=2 master=127.0.0.1:"), std::string::npos) << logs;
  EXPECT_NE(logs.find("1 rank=1 world=2 master=127.0.0.1:"), std::string::npos) << logs;
  // Two nodes: one replica each (n1-standard-2 = all of a fake node's 2 CPUs).
  if (g_usable_nodes >= 2) {
    EXPECT_NE(logs.find("node=n1"), std::string::npos) << logs;
    EXPECT_NE(logs.find("node=n2"), std::string::npos) << logs;
  }
  EXPECT_NE(logs.find("\"cluster\":{\"workerpool0\":[\"127.0.0.1:"), std::string::npos) << logs;
}

TEST_F(SlurmExecutorIntegrationTest, WorkerExitCodeFailsTheGangNamingIt) {
  ASSERT_TRUE(executor_->Submit(Spec("bad", "sleep 30", "echo failing; exit 3")).ok());
  auto end = WaitFor("bad", Terminal);
  std::string msg = end.error_message.substr(0, end.error_message.find(" ("));
  EXPECT_EQ(std::to_string(static_cast<int>(end.state)) + " " + msg,
            std::to_string(static_cast<int>(GangState::kFailed)) +
                " workerpool1 replica 0 exited with code 3")
      << end.error_message << "\n"
      << Logs("bad");
}

TEST_F(SlurmExecutorIntegrationTest, CancelDeliversSigtermThenEndsCancelled) {
  const char kTrap[] =
      "trap 'echo got SIGTERM; exit 143' TERM; echo started; "
      "while true; do sleep 0.2; done";
  ASSERT_TRUE(executor_->Submit(Spec("stop", kTrap, kTrap)).ok());
  WaitFor("stop", [&](GangState s) {
    return s == GangState::kRunning && Logs("stop").find("started") != std::string::npos;
  });
  ASSERT_TRUE(executor_->Cancel("stop").ok());
  auto end = WaitFor("stop", Terminal);
  std::string logs = Logs("stop");
  EXPECT_EQ(static_cast<int>(end.state), static_cast<int>(GangState::kCancelled)) << logs;
  EXPECT_NE(logs.find("got SIGTERM"), std::string::npos) << logs;
}

TEST_F(SlurmExecutorIntegrationTest, DifferentMachineTypesRunAsAHeterogeneousJob) {
  // The chief lingers: its exit ends the gang, which would stop a worker that has not printed yet.
  GangSpec spec = Spec("het", std::string(kShowEnv) + "; sleep 3", kShowEnv);
  spec.replicas[1].machine_type = "n1-standard-1";
  ASSERT_TRUE(executor_->Submit(spec).ok());
  auto end = WaitFor("het", Terminal);
  std::string logs = Logs("het");
  std::string script =
      trainyard::testing::ReadFileOrDie(dir_ / "jobs/het/slurm/attempt-1/job.sbatch");
  EXPECT_EQ(static_cast<int>(end.state), static_cast<int>(GangState::kSucceeded)) << logs;
  if (g_usable_nodes >= 2) {
    EXPECT_NE(script.find("#SBATCH hetjob"), std::string::npos) << script;
  } else {  // heterogeneous jobs never start on one node: one homogeneous allocation instead
    EXPECT_EQ(script.find("#SBATCH hetjob"), std::string::npos) << script;
    EXPECT_NE(logs.find("Slurm starts those only across 2 or more nodes"), std::string::npos)
        << logs;
  }
  EXPECT_NE(logs.find("0 rank=0 world=2 master=127.0.0.1:"), std::string::npos) << logs;
  EXPECT_NE(logs.find("1 rank=1 world=2 master=127.0.0.1:"), std::string::npos) << logs;
}

TEST_F(SlurmExecutorIntegrationTest, AdoptAfterServerRestartFollowsTheSameSlurmJob) {
  ASSERT_TRUE(executor_->Submit(Spec("adopt", "sleep 2; echo chief done", "sleep 2")).ok());
  WaitFor("adopt", [](GangState s) { return s == GangState::kRunning; });
  executor_->Shutdown();
  SlurmExecutorOptions o;
  o.data_dir = dir_ / "data";
  o.poll_interval = std::chrono::milliseconds(200);
  executor_ = std::make_unique<SlurmExecutor>(o);  // the "restarted server"
  auto adopted = executor_->Adopt(Spec("adopt", "sleep 2; echo chief done", "sleep 2"));
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  auto end = WaitFor("adopt", Terminal);
  std::string logs = Logs("adopt");
  EXPECT_EQ(static_cast<int>(end.state), static_cast<int>(GangState::kSucceeded)) << logs;
  EXPECT_NE(logs.find("re-attaching to Slurm job"), std::string::npos) << logs;
  EXPECT_NE(logs.find("0 chief done"), std::string::npos) << logs;
  EXPECT_FALSE(fs::exists(dir_ / "jobs/adopt/slurm/attempt-2")) << "resubmitted instead of adopted";
}

TEST_F(SlurmExecutorIntegrationTest, GpuReplicasSeeTheGresDevicesSlurmAssigned) {
  CliSlurmClient client(CommandRunner::Real());
  auto nodes = client.Nodes("");
  int gpu_nodes = 0;
  for (const auto& n : *nodes) gpu_nodes += n.gpus > 0 ? 1 : 0;
  if (gpu_nodes < 2) {
    GTEST_SKIP() << "needs 2 nodes with GRES gpu: bash scripts/slurm-local.sh start --nodes 2 "
                    "--gpus-per-node 1";
  }
  GangSpec spec =
      Spec("gpu", "echo \"cuda=[$CUDA_VISIBLE_DEVICES]\"", "echo \"cuda=[$CUDA_VISIBLE_DEVICES]\"");
  for (auto& r : spec.replicas) {
    r.accelerator_type = "NVIDIA_TESLA_T4";
    r.accelerator_count = 1;
  }
  ASSERT_TRUE(executor_->Submit(spec).ok());
  auto end = WaitFor("gpu", Terminal);
  std::string logs = Logs("gpu");
  EXPECT_EQ(static_cast<int>(end.state), static_cast<int>(GangState::kSucceeded)) << logs;
  EXPECT_NE(logs.find("0 cuda=[0]"), std::string::npos) << logs;
  EXPECT_NE(logs.find("1 cuda=[0]"), std::string::npos) << logs;
}

}  // namespace
}  // namespace trainyard::slurm
