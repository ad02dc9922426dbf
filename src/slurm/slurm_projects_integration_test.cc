// --slurm-projects through a real cluster with slurmdbd accounting: jobs of two projects go
// through the real SlurmExecutor and `sacct` shows each with its own account, partition, QOS
// and user. Starts nothing itself; needs
//   bash scripts/slurm-local.sh start --nodes 2 --accounting dbd
// and skips, saying so, without a cluster or without slurmdbd. It adds two accounts and two QOS
// (ty-team-a/b, ty-high/low) with sacctmgr and removes them at the end.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <thread>

#include "common/file_util.h"
#include "slurm/slurm_executor.h"
#include "slurm/slurm_test_cluster.h"
#include "testing/test_util.h"

namespace trainyard::slurm {
namespace {

namespace fs = std::filesystem;
using executor::GangState;
using slurm::testing::Command;

class SlurmProjectsIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip = slurm::testing::ClusterSkipReason();
    if (skip.empty()) skip = slurm::testing::DbdSkipReason();
    if (!skip.empty()) GTEST_SKIP() << skip;
    dir_ = trainyard::testing::MakeTestDir();
    // The job of team-b runs as nobody: it must reach its job dir. Bits are only added, so /tmp
    // keeps its sticky, world-writable mode (setting 0755 on every ancestor took it away).
    for (fs::path d = dir_; d != d.root_path(); d = d.parent_path()) {
      struct stat st {};
      if (::stat(d.c_str(), &st) == 0 && (st.st_mode & 0005) != 0005) {
        ::chmod(d.c_str(), (st.st_mode & 07777) | 0005);
      }
    }
    AddAssociations();
  }
  void TearDown() override {
    if (!added_) return;
    // Best effort: the accounts go first (their users' associations with them), then the QOS.
    Command({"sacctmgr", "-i", "remove", "account", "ty-team-a,ty-team-b"});
    Command({"sacctmgr", "-i", "remove", "qos", "ty-high,ty-low"});
  }

  void AddAssociations() {
    // "Nothing new added" (exit 1) when a crashed earlier run left them: fine.
    Command({"sacctmgr", "-i", "add", "qos", "ty-high,ty-low"});
    Command({"sacctmgr", "-i", "add", "account", "ty-team-a,ty-team-b"});
    Command({"sacctmgr", "-i", "add", "user", "root", "account=ty-team-a", "qos=normal,ty-high"});
    Command({"sacctmgr", "-i", "add", "user", "nobody", "account=ty-team-b", "qos=normal,ty-low"});
    added_ = true;
    std::string assoc = Command({"sacctmgr", "-n", "-P", "show", "assoc", "format=account,user"});
    ASSERT_NE(assoc.find("ty-team-b|nobody"), std::string::npos) << assoc;
  }

  std::unique_ptr<SlurmExecutor> Make() {
    fs::path table = dir_ / "slurm-projects.json";
    EXPECT_TRUE(WriteFileAtomic(table, R"({"projects": {
      "team-a": {"account": "ty-team-a", "qos": "ty-high"},
      "team-b": {"account": "ty-team-b", "qos": "ty-low", "user": "nobody"}}})")
                    .ok());
    auto projects = SlurmProjects::Load({table, ::geteuid(), nullptr});
    EXPECT_TRUE(projects.ok()) << projects.status().ToString();
    SlurmExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.partition = "debug";
    o.poll_interval = std::chrono::milliseconds(200);
    o.rendezvous_timeout = std::chrono::seconds(60);
    if (projects.ok()) o.projects = *projects;
    return std::make_unique<SlurmExecutor>(o);
  }

  executor::GangSpec Spec(const std::string& id, const std::string& project) {
    executor::GangSpec g;
    g.job_id = id;
    g.project = project;
    g.job_dir = dir_ / "jobs" / id;
    g.max_restarts = 0;
    g.kill_grace = std::chrono::seconds(5);
    g.replicas.push_back({0, 0, "n1-standard-2", "", 0, {"/bin/sh", "-c", "id -un"}, {}});
    return g;
  }

  // What sacct knows of the job of attempt 1 of `id`; sacct learns of the end asynchronously
  // (slurmctld -> slurmdbd), so ask until it reports COMPLETED.
  std::string Sacct(const std::string& id) {
    std::string out;
    for (int i = 0; i < 150; ++i) {
      out = Command({"sacct", "-n", "-P", "-X", "--name=trainyard-" + id + "-1",
                     "--starttime=now-1hour", "-o", "User,Account,Partition,QOS,State"});
      if (out.find("COMPLETED") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return out;
  }

  GangState WaitForEnd(SlurmExecutor& e, const std::string& id) {
    for (int i = 0; i < 900; ++i) {
      auto s = e.Get(id);
      if (s.ok() && (s->state == GangState::kSucceeded || s->state == GangState::kFailed ||
                     s->state == GangState::kCancelled)) {
        return s->state;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return GangState::kRunning;
  }

  std::string Logs(SlurmExecutor& e, const std::string& id) {
    std::string text;
    if (auto lines = e.ReadLogs(id, -1, 1000); lines.ok()) {
      for (const auto& l : *lines) text += l.text + "\n";
    }
    return text;
  }

  fs::path dir_;
  bool added_ = false;
};

TEST_F(SlurmProjectsIntegrationTest, SacctShowsEachProjectsAccountQosAndUser) {
  auto e = Make();
  // Unique per run: sacct keeps the jobs of earlier runs under the same names.
  const std::string a = "pa" + std::to_string(::getpid()), b = "pb" + std::to_string(::getpid());
  ASSERT_TRUE(e->Submit(Spec(a, "team-a")).ok());
  ASSERT_TRUE(e->Submit(Spec(b, "team-b")).ok());
  EXPECT_EQ(WaitForEnd(*e, a), GangState::kSucceeded) << Logs(*e, a);
  EXPECT_EQ(WaitForEnd(*e, b), GangState::kSucceeded) << Logs(*e, b);
  // The replicas print their user (`id -un`): root for team-a, nobody for team-b.
  EXPECT_NE(Logs(*e, b).find("nobody"), std::string::npos) << Logs(*e, b);
  EXPECT_EQ(Sacct(a) + Sacct(b),
            "root|ty-team-a|debug|ty-high|COMPLETED\n"
            "nobody|ty-team-b|debug|ty-low|COMPLETED\n");
}

}  // namespace
}  // namespace trainyard::slurm
