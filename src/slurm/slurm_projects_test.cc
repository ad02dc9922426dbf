// SlurmProjects (the --slurm-projects table) and what the executor makes of it: the sbatch
// script's account, partition, QOS and --uid/--gid, checked through FakeSlurmClient.
#include "slurm/slurm_projects.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_util.h"
#include "executor/job_dir_layout.h"
#include "slurm/fake_slurm_client.h"
#include "slurm/slurm_executor.h"
#include "testing/test_util.h"

namespace trainyard::slurm {
namespace {

namespace fs = std::filesystem;

// Users this "host" has: alice (uid 4101) and root.
StatusOr<executor::RunAs> FakeLookup(const std::string& name) {
  if (name == "alice") return executor::RunAs{"alice", 4101, 4102, {}, "/home/alice", {}};
  if (name == "root") return executor::RunAs{"root", 0, 0, {}, "/root", {}};
  return NotFoundError("no Unix user '" + name + "' on this host");
}

class SlurmProjectsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = trainyard::testing::MakeTestDir(); }

  StatusOr<SlurmProjects> Load(const std::string& json, uid_t server_uid = 0) {
    fs::path file = dir_ / "slurm-projects.json";
    EXPECT_TRUE(WriteFileAtomic(file, json).ok());
    SlurmProjectsOptions o;
    o.file = file;
    o.server_uid = server_uid;
    o.lookup = FakeLookup;
    return SlurmProjects::Load(o);
  }

  // The load error without the file name (it lies in a per-test directory).
  std::string LoadError(const std::string& json, uid_t server_uid = 0) {
    auto t = Load(json, server_uid);
    if (t.ok()) return "loaded";
    std::string m = t.status().message();
    size_t at = m.find("slurm-projects.json: ");
    return at == std::string::npos ? m : m.substr(at + 21);
  }

  static std::string Show(const SlurmTarget& t) {
    return t.partition + "|" + t.account + "|" + t.qos + "|" + (t.user ? t.user->user : "-") + "|" +
           t.rule;
  }

  fs::path dir_;
  const SlurmTarget server_wide_{"debug", "ops", "normal", std::nullopt, ""};
};

constexpr char kTable[] = R"({"projects": {
  "team-a": {"account": "acct-a", "qos": "high",
             "serviceAccounts": {"etl@a.iam.gserviceaccount.com": {"qos": "low", "user": "alice"}}},
  "team-b": {"partition": "gpu"}}})";

TEST_F(SlurmProjectsTest, ResolveFallsBackFieldByField) {
  auto t = Load(kTable);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::string got;
  for (auto [project, sa] : std::vector<std::pair<std::string, std::string>>{
           {"team-a", ""},
           {"team-a", "etl@a.iam.gserviceaccount.com"},
           {"team-a", "other@a.iam.gserviceaccount.com"},
           {"team-b", "etl@a.iam.gserviceaccount.com"},
           {"team-c", ""}}) {
    got += Show(t->Resolve(project, sa, server_wide_)) + "\n";
  }
  EXPECT_EQ(got,
            "debug|acct-a|high|-|projects.team-a\n"
            "debug|acct-a|low|alice|projects.team-a.serviceAccounts[\"etl@a.iam.gserviceaccount."
            "com\"]\n"
            "debug|acct-a|high|-|projects.team-a\n"
            "gpu|ops|normal|-|projects.team-b\n"
            "debug|ops|normal|-|\n");
}

TEST_F(SlurmProjectsTest, NoTableIsTheServerWideFlags) {
  EXPECT_EQ(Show(SlurmProjects().Resolve("team-a", "x", server_wide_)), "debug|ops|normal|-|");
}

TEST_F(SlurmProjectsTest, LoadRefusesBadTablesNamingTheFieldAndTheFix) {
  std::string got;
  for (const char* json : {
           R"({"project": {}})",
           R"({"projects": {"a": {"acount": "x"}}})",
           R"({"projects": {"a": {"qos": 3}}})",
           R"({"projects": {"a": {"partition": "gpu\n#SBATCH --uid=0"}}})",
           R"({"projects": {"a": {"user": "bob"}}})",
           R"({"projects": {"a": {"user": "root"}}})",
           R"({"projects": {"a": {"serviceAccounts": {"s": {"serviceAccounts": {}}}}}})",
           R"({"projects": {"a": {"serviceAccounts": ["s"]}}})",
           R"({"projects": [)",
       }) {
    got += LoadError(json) + "\n";
  }
  EXPECT_EQ(got,
            "unknown key 'project' (expected projects)\n"
            "projects.a: unknown key 'acount' (expected account, partition, qos, user, "
            "serviceAccounts)\n"
            "projects.a.qos: expected a Slurm name (a non-empty string)\n"
            "projects.a.partition: 'gpu\n#SBATCH --uid=0' is not a Slurm name; use letters, "
            "digits, '.', '_' and '-' (as `sacctmgr show account` / `sinfo` spell it)\n"
            "projects.a.user: no Unix user 'bob' on this host; create the user (the same uid on "
            "every node) or fix the name\n"
            "projects.a.user: 'root' is uid 0; jobs are submitted as root without \"user\" "
            "already\n"
            "projects.a.serviceAccounts[\"s\"]: unknown key 'serviceAccounts' (expected account, "
            "partition, qos, user)\n"
            "projects.a.serviceAccounts: expected a JSON object of serviceAccount -> {account, "
            "partition, qos, user}\n" +
                LoadError(R"({"projects": [)") + "\n");
  EXPECT_NE(LoadError(R"({"projects": [)").find("JSON"), std::string::npos);
}

TEST_F(SlurmProjectsTest, SubmittingAsAUserNeedsARootServer) {
  EXPECT_EQ(LoadError(R"({"projects": {"a": {"user": "alice"}}})", /*server_uid=*/1000),
            "projects.a.user: submitting Slurm jobs as 'alice' needs a server running as root "
            "(Slurm honours --uid from root only); run the server as root or remove \"user\"");
}

TEST_F(SlurmProjectsTest, MissingFileNamesTheFlag) {
  SlurmProjectsOptions o;
  o.file = dir_ / "missing.json";
  auto t = SlurmProjects::Load(o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().rfind("--slurm-projects " + o.file.string() + ": ", 0), 0u)
      << t.status().message();
}

// The executor's sbatch script per project: the table's account/partition/QOS, the server-wide
// flags for a project the table does not name, and --uid/--gid for a mapped user.
class SlurmExecutorProjectsTest : public SlurmProjectsTest {
 protected:
  std::unique_ptr<SlurmExecutor> Make(SlurmProjects table) {
    SlurmNode n;
    n.name = "n1";
    n.partitions = {"debug"};
    n.default_partition = true;
    n.cpus = 8;
    n.memory_mb = 32000;
    n.state = "idle";
    client_.SetNodes({n});
    SlurmExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.partition = "debug";
    o.account = "ops";
    o.task_binary = "/bin/true";
    o.client = &client_;
    o.start_monitor = false;
    o.projects = std::move(table);
    return std::make_unique<SlurmExecutor>(o);
  }

  executor::GangSpec Spec(const std::string& id, const std::string& project,
                          const std::string& service_account = "") {
    executor::GangSpec g;
    g.job_id = id;
    g.project = project;
    g.service_account = service_account;
    g.job_dir = dir_ / "jobs" / id;
    g.replicas.push_back({0, 0, "n1-standard-4", "", 0, {"/bin/sh", "-c", "exit 0"}, {}});
    return g;
  }

  // The script's account/partition/QOS/uid/gid lines, in order.
  std::string RoutingLines(size_t submission) {
    std::string out;
    std::string script = client_.submissions().at(submission).script;
    for (const char* key : {"--partition=", "--account=", "--qos=", "--uid=", "--gid="}) {
      size_t at = script.find(std::string("#SBATCH ") + key);
      if (at == std::string::npos) continue;
      out += script.substr(at + 8, script.find('\n', at) - at - 8) + " ";
    }
    return out;
  }

  FakeSlurmClient client_;
};

TEST_F(SlurmExecutorProjectsTest, SbatchGetsEachProjectsAccountPartitionAndQos) {
  auto table = Load(kTable);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto e = Make(*table);
  ASSERT_TRUE(e->Submit(Spec("1", "team-a")).ok());
  ASSERT_TRUE(e->Submit(Spec("2", "team-b")).ok());
  ASSERT_TRUE(e->Submit(Spec("3", "team-c")).ok());
  EXPECT_EQ(RoutingLines(0) + "/ " + RoutingLines(1) + "/ " + RoutingLines(2),
            "--partition=debug --account=acct-a --qos=high / "
            "--partition=gpu --account=ops / "
            "--partition=debug --account=ops ");
}

// A mapped user: --uid/--gid, the plan's replicas run as it, and the directories the job writes
// while no longer root are its own.
TEST_F(SlurmExecutorProjectsTest, SubmitAsUserGivesItTheAttemptAndWorkDirs) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving directories to another uid needs root";
  auto table = Load(kTable);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto e = Make(*table);
  ASSERT_TRUE(e->Submit(Spec("7", "team-a", "etl@a.iam.gserviceaccount.com")).ok());
  auto plan = ReadFile(executor::SlurmAttemptDir(dir_ / "jobs" / "7", 1) / "plan.json");
  ASSERT_TRUE(plan.ok());
  std::string owners;
  for (const fs::path& d : {executor::SlurmAttemptDir(dir_ / "jobs" / "7", 1),
                            executor::SlurmAttemptDir(dir_ / "jobs" / "7", 1) / "rendezvous",
                            executor::ReplicaWorkDir(dir_ / "jobs" / "7", 0, 0)}) {
    struct stat st {};
    ASSERT_EQ(::stat(d.c_str(), &st), 0) << d;
    owners += std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) + " ";
  }
  EXPECT_EQ(RoutingLines(0) + "| " + owners + "plan runs as " +
                nlohmann::json::parse(*plan)["run_as"].value("user", "?"),
            "--partition=debug --account=acct-a --qos=low --uid=4101 --gid=4102 | "
            "4101:4102 4101:4102 4101:4102 plan runs as alice");
}

}  // namespace
}  // namespace trainyard::slurm
