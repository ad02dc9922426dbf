// What a job leaves in a bucket cannot make a root server reach outside it (docs/security.md
// "What a job can reach"): a root `trainyard server` runs a replica as `nobody` that plants links
// to a root-only file, to the server's data dir and to a root-only directory, and a FIFO; then the
// Storage API, a job's output directory and the model's artifact listing are driven through them.
// And work dirs: a job of one project, run as another user, cannot read another project's work
// files even knowing the job id. Needs root (skipped otherwise).
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class BucketLinksE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "bucket link tests need root (to switch users)";
    if (!HaveLocalExecutor()) GTEST_SKIP() << "bucket link tests need the local executor";
    dir_ = testing::MakeTestDir();
    testing::WriteFileOrDie(dir_ / "shadow", "root:TOPSECRET\n");
    ::chmod((dir_ / "shadow").c_str(), 0600);
    fs::create_directories(dir_ / "rootdir");
    ::chmod((dir_ / "rootdir").c_str(), 0700);
  }

  std::vector<std::string> Env() const {
    return {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()};
  }

  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--executor", "local"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string error;
    server_ = ServerProcess::Start(dir_ / "data", args, &error, Env(), false);
    ASSERT_NE(server_, nullptr) << error;
  }

  // Runs a one-replica `sh -c script` job of project `project` to its end; state and logs.
  std::pair<std::string, std::string> RunJob(const std::string& script,
                                             const std::string& project = "p",
                                             const std::string& account = "") {
    json spec = {
        {"workerPoolSpecs",
         {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
           {"replicaCount", "1"},
           {"containerSpec", {{"imageUri", "local"}, {"command", {"sh", "-c", script}}}}}}}};
    if (!account.empty()) spec["serviceAccount"] = account;
    HttpResult created = Http(server_->port(), "POST",
                              "/v1/projects/" + project + "/locations/us-central1/customJobs",
                              json{{"displayName", "links"}, {"jobSpec", spec}}.dump());
    EXPECT_EQ(created.status, 200) << created.body;
    const std::string name = created.body.value("name", "");
    json job = WaitForJob(server_->port(), name, {}, 60);
    auto logs = Cli(server_->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, Env());
    return {job.value("state", ""), logs.out};
  }

  // Makes bucket `bucket` through the API, writable by the replica user (as the bucket group
  // makes it where the group exists).
  void MakeBucket(const std::string& bucket) {
    HttpResult made =
        Http(server_->port(), "POST", "/storage/v1/b?project=p", json{{"name", bucket}}.dump());
    ASSERT_EQ(made.status, 200) << made.body;
    ::chmod((dir_ / "buckets" / bucket).c_str(), 0777);
  }

  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(BucketLinksE2ETest, TheStorageApiNeverFollowsALinkAJobPlanted) {
  Start();
  MakeBucket("pa-bkt");
  const std::string b = "$TRAINYARD_BUCKET_ROOT/pa-bkt";
  auto [state, logs] =
      RunJob("ln -s " + (dir_ / "shadow").string() + " " + b + "/shadow && ln -s " +
             (dir_ / "data").string() + " " + b + "/srv && ln -s " + (dir_ / "rootdir").string() +
             " " + b + "/rootdir && mkfifo " + b + "/fifo && echo planted");
  ASSERT_EQ(state, "JOB_STATE_SUCCEEDED") << logs;
  ASSERT_NE(logs.find("planted"), std::string::npos) << logs;
  const int port = server_->port();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Http(port, "GET", "/storage/v1/b/pa-bkt/o/shadow?alt=media").status, 404);
  EXPECT_EQ(Http(port, "GET", "/storage/v1/b/pa-bkt/o/srv%2Fauth.db?alt=media").status, 404);
  EXPECT_EQ(Http(port, "GET", "/storage/v1/b/pa-bkt/o/fifo?alt=media").status, 404);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "a FIFO blocked";
  HttpResult listed = Http(port, "GET", "/storage/v1/b/pa-bkt/o?prefix=srv/");
  EXPECT_EQ(listed.status, 200);
  EXPECT_FALSE(listed.body.contains("items")) << listed.body;
  listed = Http(port, "GET", "/storage/v1/b/pa-bkt/o");
  EXPECT_FALSE(listed.body.contains("items")) << "links are not objects: " << listed.body;
  // Writes and deletes through the links.
  HttpResult upload = Http(
      port, "POST", "/upload/storage/v1/b/pa-bkt/o?uploadType=media&name=rootdir%2Fplanted.txt",
      "planted by a viewer");
  EXPECT_GE(upload.status, 400) << upload.body;
  EXPECT_FALSE(fs::exists(dir_ / "rootdir" / "planted.txt"));
  EXPECT_EQ(Http(port, "DELETE", "/storage/v1/b/pa-bkt/o/shadow").status, 404);
  EXPECT_EQ(Http(port, "DELETE", "/storage/v1/b/pa-bkt/o/srv%2Fjobs.db").status, 404);
  EXPECT_EQ(testing::ReadFileOrDie(dir_ / "shadow"), "root:TOPSECRET\n");
  EXPECT_TRUE(fs::exists(dir_ / "data" / "jobs.db"));
  HttpResult copied =
      Http(port, "POST", "/storage/v1/b/pa-bkt/o/srv%2Fauth.db/copyTo/b/pa-bkt/o/stolen", "{}");
  EXPECT_EQ(copied.status, 404) << copied.body;
  // A job whose output directory goes through a link is refused before it starts.
  json spec = {{"workerPoolSpecs",
                {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                  {"replicaCount", "1"},
                  {"containerSpec", {{"imageUri", "local"}, {"command", {"true"}}}}}}},
               {"baseOutputDirectory", {{"outputUriPrefix", "gs://pa-bkt/rootdir/out"}}}};
  HttpResult job = Http(port, "POST", "/v1/projects/p/locations/us-central1/customJobs",
                        json{{"displayName", "out"}, {"jobSpec", spec}}.dump());
  EXPECT_EQ(job.status, 400) << job.body;
  EXPECT_NE(job.body.dump().find("symbolic link"), std::string::npos) << job.body;
  EXPECT_TRUE(fs::is_empty(dir_ / "rootdir"));
}

TEST_F(BucketLinksE2ETest, AProjectsJobsCannotReadAnotherProjectsWorkFiles) {
  if (::getpwnam("daemon") == nullptr) GTEST_SKIP() << "no user 'daemon' on this host";
  testing::WriteFileOrDie(dir_ / "accounts.json",
                          R"({"projects": {"teama": {"defaultUser": "nobody"},
                                           "teamb": {"defaultUser": "daemon"}}})");
  Start({"--service-accounts", (dir_ / "accounts.json").string()});
  auto [state_a, logs_a] = RunJob("echo secret-a2 > mine.txt && echo work=$PWD", "teama");
  ASSERT_EQ(state_a, "JOB_STATE_SUCCEEDED") << logs_a;
  const size_t at = logs_a.find("work=");
  ASSERT_NE(at, std::string::npos) << logs_a;
  const std::string work = logs_a.substr(at + 5, logs_a.find('\n', at) - at - 5);
  ASSERT_TRUE(fs::exists(fs::path(work) / "mine.txt")) << work;
  // teamb's user knows the path (ids show in `ps`, and are guessable): it still cannot read it.
  auto [state_b, logs_b] = RunJob("cat " + work + "/mine.txt; echo looked", "teamb");
  EXPECT_NE(logs_b.find("looked"), std::string::npos) << logs_b;
  EXPECT_EQ(logs_b.find("secret-a2"), std::string::npos) << logs_b;
}

}  // namespace
}  // namespace trainyard::e2e
