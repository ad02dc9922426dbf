// Real-daemon faults on the local cluster (scripts/slurm-local.sh), through the real
// SlurmExecutor: slurmctld stopped while a job runs and creates arrive, and the slurmd of the
// node running a job killed. The fake-client tests (slurm_executor_test.cc) cover the logic;
// these check that real Slurm behaves as that logic assumes.
//
// They stop and start the cluster's daemons, so they need a cluster slurm-local.sh manages
// (`bash scripts/slurm-local.sh start --nodes 2`) and skip otherwise; every test leaves it
// healthy (`slurm-local.sh heal`), also when it fails. ctest's RESOURCE_LOCK slurm_cluster keeps
// other cluster tests from running meanwhile.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <mutex>
#include <thread>

#include "common/file_util.h"
#include "slurm/slurm_executor.h"
#include "slurm/slurm_script.h"
#include "slurm/slurm_test_cluster.h"
#include "testing/test_util.h"

namespace trainyard::slurm {
namespace {

namespace fs = std::filesystem;
using executor::GangState;
using slurm::testing::Command;
using slurm::testing::SlurmLocal;
using Clock = std::chrono::steady_clock;

class SlurmFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip = slurm::testing::ClusterSkipReason();
    bool managed = false;
    if (skip.empty()) Command(SlurmLocal({"status"}), &managed);
    if (skip.empty() && !managed) {
      skip =
          "the Slurm cluster is not one scripts/slurm-local.sh manages (its daemons are stopped "
          "and started here); start one with: bash scripts/slurm-local.sh start --nodes 2";
    }
    if (!skip.empty()) GTEST_SKIP() << skip;
    dir_ = trainyard::testing::MakeTestDir();
    SlurmExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.poll_interval = std::chrono::milliseconds(200);
    o.rendezvous_timeout = std::chrono::seconds(60);
    executor_ = std::make_unique<SlurmExecutor>(o);
    executor_->SetListener([this](const executor::GangStatus& s) {
      std::lock_guard<std::mutex> lock(mu_);
      std::string& seen = history_[s.job_id];
      std::string state = executor::GangStateName(s.state);
      if (!seen.ends_with(state)) {
        seen += (seen.empty() ? "" : " ") + state;
      }
      if (!s.waiting_note.empty()) notes_[s.job_id] = s.waiting_note;
    });
    healed_ = false;
  }

  void TearDown() override {
    // Whatever happened: the replicas may end, the cluster is whole again.
    if (!dir_.empty()) (void)WriteFileAtomic(dir_ / "go", "");
    if (executor_) executor_->Shutdown();
    if (!dir_.empty()) Heal();
  }

  void Heal() {
    if (healed_) return;
    healed_ = true;
    bool ok = false;
    std::string error;
    Command(SlurmLocal({"heal"}), &ok, &error);
    EXPECT_TRUE(ok) << "slurm-local.sh heal failed: " << error;
  }

  // One replica that runs until the test creates <dir>/go (at most 120 s).
  executor::GangSpec Spec(const std::string& id, bool wait_for_go) {
    executor::GangSpec g;
    g.job_id = id + std::to_string(::getpid());
    g.job_dir = dir_ / "jobs" / g.job_id;
    g.max_restarts = 0;
    g.kill_grace = std::chrono::seconds(5);
    std::string script = wait_for_go ? "echo replica started; i=0; while [ ! -e '" +
                                           (dir_ / "go").string() +
                                           "' ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done"
                                     : "true";
    g.replicas.push_back({0, 0, "n1-standard-2", "", 0, {"/bin/sh", "-c", script}, {}});
    return g;
  }

  executor::GangStatus WaitFor(const std::string& id, std::function<bool(GangState)> done,
                               int seconds = 120) {
    auto deadline = Clock::now() + std::chrono::seconds(seconds);
    while (Clock::now() < deadline) {
      auto s = executor_->Get(id);
      if (s.ok() && done(s->state)) return *s;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "job " << id << " did not reach the expected state in " << seconds << "s";
    return *executor_->Get(id);
  }
  static bool Ended(GangState s) {
    return s == GangState::kSucceeded || s == GangState::kFailed || s == GangState::kCancelled;
  }

  std::string Logs(const std::string& id) {
    std::string text;
    if (auto lines = executor_->ReadLogs(id, -1, 1000); lines.ok()) {
      for (const auto& l : *lines) text += l.text + "\n";
    }
    return text;
  }

  // Slurm says RUNNING once the allocation starts, but the step (srun, which needs slurmctld
  // and the node's slurmd) may still be on its way: a fault then fails the launch instead. The
  // replica's first line says it runs under its slurmstepd.
  void WaitForReplica(const std::string& id) {
    for (int i = 0; i < 900 && Logs(id).find("replica started") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_NE(Logs(id).find("replica started"), std::string::npos) << Logs(id);
  }

  std::string History(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return history_[id];
  }
  // "<first state>..<end>", with " FAILED.." in between when the job was ever reported FAILED.
  std::string Path(const std::string& id, const executor::GangStatus& end) {
    std::string h = History(id);
    return h.substr(0, h.find(' ')) + (h.find("FAILED") != std::string::npos ? " FAILED" : "") +
           ".." + executor::GangStateName(end.state);
  }
  std::string Note(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return notes_[id];
  }

  void Daemon(const std::string& action, const std::string& name) {
    bool ok = false;
    std::string error;
    Command(SlurmLocal({"daemon", action, name}), &ok, &error);
    ASSERT_TRUE(ok) << "slurm-local.sh daemon " << action << " " << name << ": " << error;
  }

  fs::path dir_;
  std::unique_ptr<SlurmExecutor> executor_;
  std::mutex mu_;
  std::map<std::string, std::string> history_, notes_;  // job id -> states seen, waiting note
  bool healed_ = false;
};

// slurmctld stops (as for an upgrade) while a job runs and a create arrives: the create is
// accepted and waits QUEUED with the reason; the running job keeps running and is not failed;
// once slurmctld is back both end SUCCEEDED.
TEST_F(SlurmFaultsTest, ControllerDownWhileAJobRunsAndACreateArrives) {
  executor::GangSpec running = Spec("ctl-run", /*wait_for_go=*/true);
  executor::GangSpec created = Spec("ctl-new", /*wait_for_go=*/false);
  ASSERT_TRUE(executor_->Submit(running).ok());
  WaitForReplica(running.job_id);
  Daemon("stop", "slurmctld");
  Status accepted = executor_->Submit(created);
  ASSERT_TRUE(accepted.ok()) << accepted.ToString();
  // The monitor has found slurmctld gone for the running job too.
  for (int i = 0; i < 600 && Logs(running.job_id).find("cannot ask Slurm") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(WriteFileAtomic(dir_ / "go", "").ok());
  Daemon("start", "slurmctld");
  auto first = WaitFor(running.job_id, Ended);
  auto second = WaitFor(created.job_id, Ended);
  // The note the job controller writes into the job's state history.
  EXPECT_NE(Note(created.job_id).find("waiting for the Slurm controller"), std::string::npos)
      << Note(created.job_id);
  // Never FAILED on the way (a poll that cannot reach slurmctld fails nothing), then SUCCEEDED.
  EXPECT_EQ(Path(running.job_id, first) + " | " + Path(created.job_id, second),
            "QUEUED..SUCCEEDED | QUEUED..SUCCEEDED")
      << History(running.job_id) << " | " << History(created.job_id) << "\n"
      << Logs(running.job_id) << "---\n"
      << Logs(created.job_id);
}

// The slurmd of the node running a job is killed (a crashed daemon, a lost node): slurmctld
// marks the node DOWN after SlurmdTimeout (shortened to 10 s here) and ends the job NODE_FAIL
// (jobs are submitted --no-requeue: retries are Trainyard's); the job fails naming the node
// failure.
TEST_F(SlurmFaultsTest, SlurmdLostFailsTheJobNamingTheNodeFailure) {
  bool ok = false;
  std::string error;
  Command(SlurmLocal({"slurmd-timeout", "10"}), &ok, &error);
  ASSERT_TRUE(ok) << error;
  executor::GangSpec spec = Spec("node", /*wait_for_go=*/true);
  ASSERT_TRUE(executor_->Submit(spec).ok());
  WaitForReplica(spec.job_id);
  std::string node =
      Command({"squeue", "-h", "--name=" + SlurmJobName(spec.job_id, 1), "-o", "%N"});
  node = node.substr(0, node.find('\n'));
  ASSERT_FALSE(node.empty()) << "squeue does not show the job's node";
  Daemon("kill", "slurmd-" + node);
  auto end = WaitFor(spec.job_id, Ended, 180);
  EXPECT_EQ(executor::GangStateName(end.state), "FAILED") << Logs(spec.job_id);
  EXPECT_NE(end.error_message.find("NODE_FAIL"), std::string::npos) << end.error_message;
  EXPECT_NE(end.error_message.find("node failure"), std::string::npos) << end.error_message;
}

}  // namespace
}  // namespace trainyard::slurm
