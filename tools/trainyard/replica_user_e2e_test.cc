// Unprivileged replicas end to end (docs/security.md "Who replicas run as"): a root `trainyard
// server` runs replicas as `nobody` by default, as the user its --service-accounts table maps a
// job's serviceAccount to, and as root only with --allow-root-replicas; it gives replicas their
// output directories and the bucket group; it refuses unmapped service accounts at create and a
// data dir its replica users cannot reach at start-up. Needs root (skipped otherwise).
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

uid_t UidOf(const char* user) {
  const passwd* pw = ::getpwnam(user);
  return pw ? pw->pw_uid : static_cast<uid_t>(-1);
}

class ReplicaUserE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "replica user tests need root (to switch users)";
    if (!HaveLocalExecutor()) GTEST_SKIP() << "replica user tests need the local executor";
    dir_ = testing::MakeTestDir();
  }

  // A job may still be ending when the server stops: its replica, and the cgroup the server would
  // have removed, outlive it.
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) EndReplicas(dir_ / "data");
  }

  std::vector<std::string> Env() const {
    return {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()};
  }

  // A root server without --allow-root-replicas (`extra` adds flags).
  std::unique_ptr<ServerProcess> Start(std::vector<std::string> extra, std::string* error) {
    std::vector<std::string> args = {"--executor", "local"};
    args.insert(args.end(), extra.begin(), extra.end());
    return ServerProcess::Start(dir_ / "data", args, error, Env(), /*allow_root_replicas=*/false);
  }

  // Creates a one-replica `sh -c script` job through REST; the response.
  HttpResult Create(const std::string& script, const std::string& service_account = "",
                    const std::string& base_output = "") {
    json spec = {
        {"workerPoolSpecs",
         {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
           {"replicaCount", "1"},
           {"containerSpec", {{"imageUri", "local"}, {"command", {"sh", "-c", script}}}}}}}};
    if (!service_account.empty()) spec["serviceAccount"] = service_account;
    if (!base_output.empty()) spec["baseOutputDirectory"] = {{"outputUriPrefix", base_output}};
    json body = {{"displayName", "who"}, {"jobSpec", spec}};
    return Http(server_->port(), "POST", "/v1/projects/p/locations/us-central1/customJobs",
                body.dump());
  }

  // Runs the job to its end; its state and log text.
  std::pair<std::string, std::string> RunJob(const std::string& script,
                                             const std::string& service_account = "",
                                             const std::string& base_output = "") {
    HttpResult created = Create(script, service_account, base_output);
    EXPECT_EQ(created.status, 200) << created.body;
    const std::string name = created.body.value("name", "");
    json job = WaitForJob(server_->port(), name, {}, 60);
    auto logs = Cli(server_->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, Env());
    return {job.value("state", ""), logs.out};
  }

  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ReplicaUserE2ETest, ARootServerRunsReplicasAsNobodyWithTheirOutputDirs) {
  std::string error;
  server_ = Start({}, &error);
  ASSERT_NE(server_, nullptr) << error;
  auto bucket = Cli(server_->endpoint(), {"storage", "buckets", "create", "gs://bkt"}, Env());
  ASSERT_EQ(bucket.exit_code, 0) << bucket.err;
  auto [state, logs] = RunJob(
      "echo uid=$(id -u) home=$HOME; d=$TRAINYARD_BUCKET_ROOT/bkt/base/model; "
      "echo written > $d/model.txt && echo wrote-model",
      "", "gs://bkt/base");
  EXPECT_EQ(state, "JOB_STATE_SUCCEEDED") << logs;
  EXPECT_NE(logs.find("uid=" + std::to_string(UidOf("nobody"))), std::string::npos) << logs;
  EXPECT_NE(logs.find("wrote-model"), std::string::npos) << logs;
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "buckets/bkt/base/model/model.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, UidOf("nobody"));
  // The server's own state stays root's: the replica cannot write the job database.
  auto [state2, logs2] = RunJob("touch " + (dir_ / "data" / "jobs.db").string() + " && echo BAD");
  EXPECT_EQ(logs2.find("BAD"), std::string::npos) << logs2;
}

TEST_F(ReplicaUserE2ETest, ReplicasWriteIntoBucketsThroughTheBucketGroup) {
  if (::getgrnam("trainyard") == nullptr) {
    GTEST_SKIP() << "no group 'trainyard' (scripts/install-deps.sh creates it as root)";
  }
  std::string error;
  server_ = Start({}, &error);
  ASSERT_NE(server_, nullptr) << error;
  testing::WriteFileOrDie(dir_ / "in.txt", "data\n");
  auto bucket =
      Cli(server_->endpoint(), {"storage", "buckets", "create", "gs://shared-bkt"}, Env());
  ASSERT_EQ(bucket.exit_code, 0) << bucket.err;
  auto cp =
      Cli(server_->endpoint(),
          {"storage", "cp", (dir_ / "in.txt").string(), "gs://shared-bkt/data/in.txt"}, Env());
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  // The article's job writes --job-dir=gs://BUCKET/model itself, outside AIP_MODEL_DIR.
  auto [state, logs] = RunJob(
      "r=$TRAINYARD_BUCKET_ROOT/shared-bkt; cat $r/data/in.txt && mkdir -p $r/model && "
      "echo m > $r/model/out.txt && echo groups=$(id -G) && "
      "{ mkdir $TRAINYARD_BUCKET_ROOT/rogue-bkt 2>/dev/null && echo made-a-bucket || "
      "echo no-new-bucket; }");
  EXPECT_EQ(state, "JOB_STATE_SUCCEEDED") << logs;
  EXPECT_NE(logs.find("groups="), std::string::npos) << logs;
  // The bucket root is not group-writable: buckets come only from an explicit create.
  EXPECT_NE(logs.find("no-new-bucket"), std::string::npos) << logs;
  EXPECT_FALSE(fs::exists(dir_ / "buckets/rogue-bkt"));
  EXPECT_TRUE(fs::exists(dir_ / "buckets/shared-bkt/model/out.txt")) << logs;
}

TEST_F(ReplicaUserE2ETest, ServiceAccountsMapToUsersAndUnmappedOnesAreRefused) {
  const uid_t daemon = UidOf("daemon");
  if (daemon == static_cast<uid_t>(-1)) GTEST_SKIP() << "no user 'daemon' on this host";
  testing::WriteFileOrDie(
      dir_ / "accounts.json",
      R"({"projects": {"p": {"serviceAccounts": {"trainer@p.iam.gserviceaccount.com": "daemon"}}}})");
  std::string error;
  server_ = Start({"--service-accounts", (dir_ / "accounts.json").string()}, &error);
  ASSERT_NE(server_, nullptr) << error;
  auto [state, logs] = RunJob("echo uid=$(id -u)", "trainer@p.iam.gserviceaccount.com");
  EXPECT_EQ(state, "JOB_STATE_SUCCEEDED") << logs;
  EXPECT_NE(logs.find("uid=" + std::to_string(daemon)), std::string::npos) << logs;
  HttpResult refused = Create("true", "intruder@p.iam.gserviceaccount.com");
  EXPECT_EQ(refused.status, 400) << refused.body;
  const std::string message = refused.body.dump();
  EXPECT_NE(message.find("jobSpec.serviceAccount"), std::string::npos) << message;
  EXPECT_NE(message.find("intruder@p.iam.gserviceaccount.com"), std::string::npos) << message;
}

// SIGHUP re-reads --service-accounts: a new mapping serves the next job; a table that fails its
// checks is refused with a logged error and the one in use stays.
TEST_F(ReplicaUserE2ETest, SighupReloadsTheServiceAccountTable) {
  const uid_t daemon = UidOf("daemon");
  if (daemon == static_cast<uid_t>(-1)) GTEST_SKIP() << "no user 'daemon' on this host";
  const fs::path table = dir_ / "accounts.json";
  testing::WriteFileOrDie(table, R"({"projects": {"p": {"serviceAccounts": {}}}})");
  std::string error;
  server_ = Start({"--service-accounts", table.string()}, &error);
  ASSERT_NE(server_, nullptr) << error;
  const std::string account = "trainer@p.iam.gserviceaccount.com";
  EXPECT_EQ(Create("true", account).status, 400);
  auto reload = [this](const std::string& expect) {
    server_->Signal(SIGHUP);
    for (int i = 0; i < 100 && server_->Stderr().find(expect) == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_NE(server_->Stderr().find(expect), std::string::npos) << server_->Stderr();
  };
  testing::WriteFileOrDie(
      table, R"({"projects": {"p": {"serviceAccounts": {")" + account + R"(": "daemon"}}}})");
  reload("INFO reload reopened the log file");
  auto [state, logs] = RunJob("echo uid=$(id -u)", account);
  EXPECT_EQ(
      state + " " + std::to_string(logs.find("uid=" + std::to_string(daemon)) != std::string::npos),
      "JOB_STATE_SUCCEEDED 1")
      << logs;
  testing::WriteFileOrDie(table, R"({"projects": {"p": {"serviceAccounts": {")" + account +
                                     R"(": "no-such-user-x"}}}})");
  reload("ERROR reload");
  EXPECT_EQ(Create("true", account).status, 200);  // the previous table serves on
}

TEST_F(ReplicaUserE2ETest, RootReplicasNeedTheExplicitFlag) {
  testing::WriteFileOrDie(dir_ / "accounts.json", R"({"defaultUser": "root"})");
  std::string error;
  auto refused = Start({"--service-accounts", (dir_ / "accounts.json").string()}, &error);
  EXPECT_EQ(refused, nullptr);
  EXPECT_NE(error.find("--allow-root-replicas"), std::string::npos) << error;
  server_ = Start({"--allow-root-replicas"}, &error);
  ASSERT_NE(server_, nullptr) << error;
  auto [state, logs] = RunJob("echo uid=$(id -u)");
  EXPECT_NE(logs.find("uid=0"), std::string::npos) << logs;
}

TEST_F(ReplicaUserE2ETest, ADataDirNobodyCannotReachStopsTheServerAtStartUp) {
  fs::create_directories(dir_ / "private");
  ::chmod((dir_ / "private").c_str(), 0700);
  std::vector<std::string> args = {"--executor", "local"};
  std::string error;
  auto server = ServerProcess::Start(dir_ / "private" / "data", args, &error, Env(), false);
  EXPECT_EQ(server, nullptr);
  EXPECT_NE(error.find((dir_ / "private").string() + " is mode 0700"), std::string::npos) << error;
  EXPECT_NE(error.find("--allow-root-replicas"), std::string::npos) << error;
}

}  // namespace
}  // namespace trainyard::e2e
