#include "server/server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "server/built_in_executors.h"
#include "server/data_dir.h"
#include "testing/test_util.h"

namespace trainyard::server {
namespace {

constexpr const char* kJobs = "/v1/projects/p/locations/us-central1/customJobs";
constexpr const char* kJob = R"({"displayName":"first","jobSpec":{"workerPoolSpecs":[
  {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
   "containerSpec":{"imageUri":"local","command":["echo","hi"]}}]}})";

// A fake-executor server on a fresh data dir and an ephemeral port, quiet on stderr.
class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    ::setenv("TRAINYARD_BUCKET_ROOT", (dir_ / "buckets").c_str(), 1);
    ASSERT_TRUE(RegisterBuiltInExecutors(&executors_).ok());
    options_.port = 0;
    options_.data_dir = dir_ / "data";
    options_.executor = "fake";
    options_.executors = &executors_;
    options_.containers.no_containers = true;
    options_.log = &log_;
  }

  StatusOr<std::unique_ptr<Server>> Start() { return Server::Start(options_); }

  std::filesystem::path dir_;
  executor::ExecutorRegistry executors_;
  ServerOptions options_;
  std::ostringstream log_;
};

std::string DisplayNames(const Server& server) {
  httplib::Client client("127.0.0.1", server.port());
  auto res = client.Get(kJobs);
  if (!res) return "no response";
  std::string names;
  for (const auto& job :
       nlohmann::json::parse(res->body).value("customJobs", nlohmann::json::array())) {
    names += (names.empty() ? "" : ",") + job["displayName"].get<std::string>();
  }
  return std::to_string(res->status) + " " + names;
}

TEST_F(ServerTest, ServesTheApiOnAnEphemeralPortAndShutsDown) {
  auto server = Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString() << "\n" << log_.str();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto created = client.Post(kJobs, kJob, "application/json");
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 200) << created->body;
  EXPECT_EQ(DisplayNames(**server), "200 first");
  (*server)->Shutdown();
  (*server)->Wait();  // returns: serving has stopped
  EXPECT_FALSE(httplib::Client("127.0.0.1", (*server)->port()).Get(kJobs));
}

// /readyz: 200 while the data dir takes writes and has room; 503 naming the flag when the free
// space is below --min-free-disk-mib (set above any disk here), while /healthz stays 200.
TEST_F(ServerTest, ReadyzSaysWhetherNewWorkCanBeRecorded) {
  auto server = Start();
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(std::to_string(ready->status) + " " + nlohmann::json::parse(ready->body).dump(),
            "200 {\"status\":\"READY\"}");
  server->reset();
  options_.min_free_disk_mib = uint64_t{1} << 40;  // an exbibyte
  server = Start();
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client full("127.0.0.1", (*server)->port());
  auto unready = full.Get("/readyz");
  ASSERT_TRUE(unready);
  EXPECT_EQ(unready->status, 503);
  EXPECT_NE(unready->body.find("below the 1099511627776 MiB new work needs (--min-free-disk-mib)"),
            std::string::npos)
      << unready->body;
  EXPECT_EQ(full.Get("/healthz")->status, 200);
}

// /metrics sees the whole server: its volumes, every kind of resource, the executor, the version.
TEST_F(ServerTest, MetricsSeeTheVolumesTheResourcesAndTheExecutor) {
  auto server = Start();
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  ASSERT_EQ(client.Post(kJobs, kJob, "application/json")->status, 200);
  const std::string data_dir = (*server)->data_dir().string();
  const std::vector<std::string> wanted = {
      "trainyard_disk_free_bytes{volume=\"data_dir\",path=\"" + data_dir + "\"} ",
      "trainyard_disk_free_inodes{volume=\"bucket_root\",path=\"" + (dir_ / "buckets").string() +
          "\"} ",
      "trainyard_resources{kind=\"customJobs\",state=\"JOB_STATE_",
      "trainyard_executor_up{executor=\"fake\"} 1\n",
      "trainyard_build_info{version=\"",
      "trainyard_host_memory_bytes "};
  std::string missing;
  // The polling thread counts resources every second: the job shows within a few.
  for (int i = 0; i < 50; ++i) {
    auto metrics = client.Get("/metrics");
    ASSERT_TRUE(metrics);
    missing.clear();
    for (const auto& w : wanted) {
      if (metrics->body.find(w) == std::string::npos) missing += w + "\n";
    }
    if (missing.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(missing, "");
}

// Issue #46 over HTTP: an admin sets a project's quota; a job larger than the whole quota is 429
// naming it; /metrics shows the limit; creates over --create-rate are 429 with Retry-After.
TEST_F(ServerTest, QuotasAndTheCreateRateAnswer429) {
  options_.create_rate = "2/h";  // a burst of 2, then one per 30 minutes
  auto server = Start();
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto code = [](const httplib::Result& r) { return std::to_string(r ? r->status : -1) + " "; };
  std::string got =
      code(client.Post("/v1/admin/projects/p:setQuota", R"({"vcpus": 2})", "application/json"));
  auto over = client.Post(kJobs, kJob, "application/json");  // 4 vCPUs
  got += code(over);
  got += code(client.Post("/v1/admin/projects/p:setQuota", R"({"vcpus": 4, "weight": 2})",
                          "application/json"));
  got += code(client.Post(kJobs, kJob, "application/json"));
  auto limited = client.Post(kJobs, kJob, "application/json");
  got += code(limited) + (limited && limited->has_header("Retry-After") ? "Retry-After" : "");
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(over && metrics);
  EXPECT_EQ(got, "200 429 200 200 429 Retry-After");
  EXPECT_NE(over->body.find("project p's whole quota is 2 vCPUs"), std::string::npos) << over->body;
  EXPECT_NE(metrics->body.find("trainyard_project_quota{project=\"p\",resource=\"vcpus\"} 4\n"),
            std::string::npos)
      << metrics->body;
}

TEST_F(ServerTest, RefusesASecondServerOnTheSameDataDirAndReleasesItOnDestruction) {
  auto first = Start();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(httplib::Client("127.0.0.1", (*first)->port()).Post(kJobs, kJob, "application/json"));
  auto second = Start();
  const std::string refused = second.status().ToString();
  first->reset();
  auto third = Start();  // the store is durable: the job is still there
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(refused + " | " + DisplayNames(**third),
            "FAILED_PRECONDITION: another trainyard server is using --data-dir " +
                (dir_ / "data").string() + "; stop it or choose another --data-dir | 200 first");
}

TEST_F(ServerTest, KeepsItsDatabasesToItself) {
  auto server = Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::string modes;
  for (const char* name : {"jobs.db", "auth.db"}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir_ / "data" / name).c_str(), &st), 0) << name;
    std::ostringstream mode;
    mode << name << "=" << std::oct << (st.st_mode & 0777) << " ";
    modes += mode.str();
  }
  EXPECT_EQ(modes, "jobs.db=600 auth.db=600 ");
}

TEST_F(ServerTest, RefusesUnknownExecutorsAndStoresNamingTheFlag) {
  options_.executor = "podman";
  const std::string executor = Start().status().ToString();
  options_.executor = "fake";
  options_.store = "postgres";
  EXPECT_EQ(executor.substr(0, executor.find(';')) + " | " + Start().status().ToString(),
            "INVALID_ARGUMENT: --executor: 'podman' is not a registered executor | "
            "INVALID_ARGUMENT: --store: 'postgres' is not one of sqlite, memory");
}

TEST(DataDirTest, LockIsExclusiveUntilTheHolderIsGone) {
  const std::filesystem::path dir = testing::MakeTestDir();
  auto held = DataDir::Lock(dir);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  const bool refused_while_held = !DataDir::Lock(dir).ok();
  { DataDir moved = std::move(*held); }  // the lock goes with the moved-to object
  EXPECT_EQ(std::to_string(refused_while_held) + " " + DataDir::Lock(dir).status().ToString() +
                " " + std::to_string(std::filesystem::is_directory(dir / "jobs")),
            "1 OK 1");
}

// Scripts, docs and the e2e tests use these names; each backend declares its own.
TEST(BuiltInExecutorsTest, DeclareTheDocumentedFlags) {
  executor::ExecutorRegistry registry;
  ASSERT_TRUE(RegisterBuiltInExecutors(&registry).ok());
  std::string names;
  for (const executor::ExecutorFlag& flag : registry.Flags()) names += flag.name + " ";
  EXPECT_EQ(
      names,
      "--fake-run-ms --cpus --memory-gib --gpus --max-replicas --executor-poll-ms --cgroup-parent "
      "--no-cgroups --cgroup-delegated --restart-backoff-seconds --restart-backoff-max-seconds "
      "--any-gpu-model "
      "--slurm-partition --slurm-account --slurm-qos --slurm-projects ");
}

}  // namespace
}  // namespace trainyard::server
