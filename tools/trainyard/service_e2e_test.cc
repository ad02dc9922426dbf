// End-to-end tests of running the server as a service (docs/operations.md): retention of old
// job files, logs, operations and audit rows, and `trainyard admin gc`, with the real binary.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kParent = "projects/local/locations/us-central1";

class ServiceE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveLocalExecutor()) GTEST_SKIP() << "built without the LocalExecutor; needs real jobs";
    dir_ = testing::MakeTestDir();
  }

  void StartServer(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--executor", "local", "--gpus", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string error;
    server_ = ServerProcess::Start(dir_ / "data", args, &error, Env());
    ASSERT_NE(server_, nullptr) << error;
  }
  std::vector<std::string> Env() const {
    return {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()};
  }
  testing::ProcessResult Run(const std::vector<std::string>& args) {
    return Cli(server_->endpoint(), args, Env());
  }

  // A job that prints `line` and leaves a file in its work dir; returns its name once ended.
  std::string RunJob(const std::string& line) {
    json body = {{"displayName", "retention"},
                 {"jobSpec",
                  {{"workerPoolSpecs",
                    {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                      {"replicaCount", 1},
                      {"containerSpec",
                       {{"imageUri", "local"},
                        {"command", {"sh", "-c", "echo " + line + "; echo x > out.txt"}}}}}}}}}};
    HttpResult created =
        Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs", body.dump());
    EXPECT_EQ(created.status, 200) << created.body.dump();
    const std::string name = created.body.value("name", "");
    EXPECT_EQ(WaitForJob(server_->port(), name, {}).value("state", ""), "JOB_STATE_SUCCEEDED");
    return name;
  }

  // The text of the job's Cloud Logging entries, one per line.
  std::string LogText(const std::string& id) {
    json query = {{"resourceNames", {"projects/local"}},
                  {"filter", "resource.labels.job_id=" + id}};
    HttpResult r = Http(server_->port(), "POST", "/v2/entries:list", query.dump());
    std::string text;
    for (const json& e : r.body.value("entries", json::array())) {
      text += e.value("textPayload", "") + "\n";
    }
    return text;
  }

  std::string Entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
    return out;
  }

  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServiceE2ETest, GcRemovesWorkFilesThenADeletedJobsLogWhichStaysReadableUntilThen) {
  StartServer({"--work-dir-ttl", "1s", "--log-ttl", "4s", "--gc-interval", "0"});
  const std::string name = RunJob("kept-after-delete");
  const std::string id = name.substr(name.rfind('/') + 1);
  const fs::path job_dir = dir_ / "data" / "jobs" / id;
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));

  auto gc = Run({"admin", "gc"});
  EXPECT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_EQ(gc.out.substr(0, 44), "removed: 1 job work dirs, 0 job logs, 0 dele") << gc.out;
  EXPECT_EQ(Entries(job_dir), "logs");

  // Deleted: the row goes, the log stays for its project (as Cloud Logging keeps entries).
  EXPECT_EQ(Http(server_->port(), "DELETE", "/v1/" + name).status, 200);
  EXPECT_EQ(Http(server_->port(), "GET", "/v1/" + name).status, 404);
  EXPECT_NE(LogText(id).find("kept-after-delete"), std::string::npos) << LogText(id);

  std::this_thread::sleep_for(std::chrono::seconds(4));
  auto dry = Run({"admin", "gc", "--dry-run", "--format", "json"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(json::parse(dry.out).value("deletedJobDirsRemoved", -1), 1) << dry.out;
  EXPECT_TRUE(fs::exists(job_dir));
  auto last = Run({"admin", "gc"});
  EXPECT_EQ(last.exit_code, 0) << last.err;
  EXPECT_FALSE(fs::exists(job_dir));
  EXPECT_EQ(LogText(id), "");
}

TEST_F(ServiceE2ETest, TheServerRunsRetentionEveryGcInterval) {
  StartServer({"--work-dir-ttl", "1s", "--gc-interval", "2s"});
  const std::string name = RunJob("periodic");
  const fs::path job_dir = dir_ / "data" / "jobs" / name.substr(name.rfind('/') + 1);
  // The pass removes first and logs after: wait for both.
  for (int i = 0; i < 100 && (fs::exists(job_dir / "work") ||
                              server_->Stderr().find("INFO retention") == std::string::npos);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(Entries(job_dir), "logs");
  EXPECT_NE(server_->Stderr().find("INFO retention removed: 1 job work dirs"), std::string::npos)
      << server_->Stderr();
}

// Every request and every step of a job's history is a line of the server log; SIGHUP starts a
// new file after logrotate moved the old one.
TEST_F(ServiceE2ETest, TheLogHasRequestsAndJobStepsAsJsonAndIsReopenedOnSighup) {
  const fs::path log_file = dir_ / "log" / "server.log";
  StartServer({"--log-file", log_file.string(), "--log-format", "json"});
  const std::string name = RunJob("logged");
  std::string states, routes;  // the job's states (each once), the routes POSTed to
  std::istringstream lines(testing::ReadFileOrDie(log_file));
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line, nullptr, false);
    ASSERT_TRUE(e.is_object()) << line;
    const std::string state = e.value("state", "");
    if (e["event"] == "job" && e["job"] == name && states.find(state) == std::string::npos) {
      states += state + " ";
    }
    if (e["event"] == "request" && e["method"] == "POST") routes += e.value("route", "") + " ";
  }
  EXPECT_EQ(states + "| " + routes,
            "JOB_STATE_QUEUED JOB_STATE_PENDING JOB_STATE_RUNNING JOB_STATE_SUCCEEDED | "
            "/v1/projects/([^/]+)/locations/([^/]+)/customJobs ");

  fs::rename(log_file, dir_ / "log" / "server.log.1");
  server_->Signal(SIGHUP);
  for (int i = 0; i < 100 && !fs::exists(log_file); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fs::exists(log_file));
  EXPECT_NE(testing::ReadFileOrDie(log_file).find("\"event\":\"reload\""), std::string::npos);
  Http(server_->port(), "GET", "/v1/" + name);
  EXPECT_NE(testing::ReadFileOrDie(log_file).find("\"path\":\"/v1/" + name + "\""),
            std::string::npos);
}

// Drained, the server accepts jobs and holds them; a restart stays drained; resume starts them.
TEST_F(ServiceE2ETest, DrainHoldsNewJobsAcrossARestartUntilResume) {
  StartServer({});
  ASSERT_EQ(Run({"admin", "drain"}).exit_code, 0);
  json body = {{"displayName", "held"},
               {"jobSpec",
                {{"workerPoolSpecs",
                  {{{"machineSpec", {{"machineType", "e2-standard-2"}}},
                    {"replicaCount", 1},
                    {"containerSpec", {{"imageUri", "local"}, {"command", {"true"}}}}}}}}}};
  HttpResult created =
      Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs", body.dump());
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const std::string name = created.body.value("name", "");
  server_.reset();  // SIGTERM
  StartServer({});
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto status = Run({"admin", "status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const json held = json::parse(status.out);
  EXPECT_EQ(Http(server_->port(), "GET", "/v1/" + name).body.value("state", "") + " " +
                held["draining"].dump() + " " + held["heldJobs"].dump(),
            "JOB_STATE_QUEUED true 1");
  auto resumed = Run({"admin", "resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(json::parse(resumed.out).value("startedJobs", -1), 1);
  EXPECT_EQ(WaitForJob(server_->port(), name, {}).value("state", ""), "JOB_STATE_SUCCEEDED");
}

// A paused project's jobs wait QUEUED (saying so in describe) across a restart while another
// project's run; status and /metrics show the pause; resuming the project starts them.
TEST_F(ServiceE2ETest, APausedProjectHoldsItsJobsAcrossARestartOthersRunUntilResume) {
  StartServer({});
  auto paused = Run({"admin", "drain", "--project", "teama"});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  json body = {{"displayName", "paused"},
               {"jobSpec",
                {{"workerPoolSpecs",
                  {{{"machineSpec", {{"machineType", "e2-standard-2"}}},
                    {"replicaCount", 1},
                    {"containerSpec", {{"imageUri", "local"}, {"command", {"true"}}}}}}}}}};
  auto create = [&](const std::string& project) {
    HttpResult r =
        Http(server_->port(), "POST",
             "/v1/projects/" + project + "/locations/us-central1/customJobs", body.dump());
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body.value("name", "");
  };
  const std::string held = create("teama"), other = create("teamb");
  EXPECT_EQ(WaitForJob(server_->port(), other, {}).value("state", ""), "JOB_STATE_SUCCEEDED");
  server_.reset();  // SIGTERM
  StartServer({});
  auto described = Run({"ai", "custom-jobs", "describe", held});
  auto status = Run({"admin", "status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const json listed = json::parse(status.out)["pausedProjects"];
  httplib::Client client("127.0.0.1", server_->port());
  auto scraped = client.Get("/metrics");
  const std::string metrics = scraped ? scraped->body : "no answer";
  EXPECT_EQ(Http(server_->port(), "GET", "/v1/" + held).body.value("state", "") + " " +
                std::to_string(listed.size()) + " " + listed[0].value("project", "") + " " +
                listed[0]["heldJobs"].dump(),
            "JOB_STATE_QUEUED 1 teama 1");
  EXPECT_NE(described.out.find("held: project teama is paused by an admin since "),
            std::string::npos)
      << described.out << described.err;
  EXPECT_NE(metrics.find("trainyard_project_paused{project=\"teama\"} 1"), std::string::npos)
      << metrics;
  auto resumed = Run({"admin", "resume", "--project", "teama"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(json::parse(resumed.out).value("startedJobs", -1), 1);
  EXPECT_EQ(WaitForJob(server_->port(), held, {}).value("state", ""), "JOB_STATE_SUCCEEDED");
}

// A job already in the local executor's queue (the host full) when its project is paused stays
// there: once the host frees, a later job of another project starts instead; the resume starts it.
TEST_F(ServiceE2ETest, APausedProjectsJobInTheExecutorsQueueWaitsWhileOthersStart) {
  StartServer({"--cpus", "2"});
  auto create = [&](const std::string& project, const std::string& command) {
    json body = {
        {"displayName", "q"},
        {"jobSpec",
         {{"workerPoolSpecs",
           {{{"machineSpec", {{"machineType", "e2-standard-2"}}},
             {"replicaCount", 1},
             {"containerSpec", {{"imageUri", "local"}, {"command", {"sh", "-c", command}}}}}}}}}};
    HttpResult r =
        Http(server_->port(), "POST",
             "/v1/projects/" + project + "/locations/us-central1/customJobs", body.dump());
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body.value("name", "");
  };
  const std::string filler = create("teamb", "sleep 300");
  ASSERT_EQ(WaitForJob(server_->port(), filler, {"JOB_STATE_RUNNING"}).value("state", ""),
            "JOB_STATE_RUNNING");
  const std::string queued = create("teama", "true");
  ASSERT_EQ(Run({"admin", "drain", "--project", "teama"}).exit_code, 0);
  ASSERT_EQ(Http(server_->port(), "POST", "/v1/" + filler + ":cancel").status, 200);
  const std::string later = create("teamb", "true");
  EXPECT_EQ(WaitForJob(server_->port(), later, {}).value("state", ""), "JOB_STATE_SUCCEEDED");
  const json waiting = Http(server_->port(), "GET", "/v1/" + queued).body;
  EXPECT_EQ(waiting.value("state", "") + " " +
                waiting["trainyardInfo"]["stateHistory"].back().value("detail", "").substr(0, 29),
            "JOB_STATE_QUEUED held: project teama is paused");
  ASSERT_EQ(Run({"admin", "resume", "--project", "teama"}).exit_code, 0);
  EXPECT_EQ(WaitForJob(server_->port(), queued, {}).value("state", ""), "JOB_STATE_SUCCEEDED");
}

// `--config FILE`: a [server] section of flags; the command line wins; an unknown key is named.
TEST_F(ServiceE2ETest, AConfigFileSetsServerFlagsAndAnUnknownKeyIsRefused) {
  testing::WriteFileOrDie(dir_ / "server.toml", "[server]\nlog-format = \"json\"\nlog-file = \"" +
                                                    (dir_ / "server.log").string() +
                                                    "\"\ngc-interval = \"0\"\n");
  StartServer({"--config", (dir_ / "server.toml").string()});
  Http(server_->port(), "GET", std::string("/v1/") + kParent + "/customJobs");
  EXPECT_NE(testing::ReadFileOrDie(dir_ / "server.log").find("\"event\":\"request\""),
            std::string::npos);
  testing::WriteFileOrDie(dir_ / "bad.toml", "[server]\nlog-tll = \"30d\"\n");
  auto bad = Cli("http://127.0.0.1:1", {"server", "--config", (dir_ / "bad.toml").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("log-tll"), std::string::npos) << bad.err;
}

TEST_F(ServiceE2ETest, ABadTtlFlagIsAUsageErrorNamingIt) {
  auto r = Cli("http://127.0.0.1:1", {"server", "--log-ttl", "30days"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--log-ttl: '30days' is not a duration; use 0 (keep forever)"),
            std::string::npos)
      << r.err;
}

// The server's delegated cgroup (`--cgroup-delegated`, the systemd unit's Delegate=yes): the
// server sits alone in its leaf "server", so killing every process in that cgroup (what systemd's
// control-group kill, an OOM kill or an operator's `kill $(cat cgroup.procs)` does) ends the
// server and nothing else; the job runs on, its supervisor in the sibling leaf "supervisors",
// and the next server re-adopts it to success without a restart.
class DelegatedCgroupE2ETest : public ServiceE2ETest {
 protected:
  void SetUp() override {
    ServiceE2ETest::SetUp();
    if (IsSkipped()) return;
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
    name_ = "trainyard-e2e-delegated-" + std::to_string(::getpid());
    // cgroup v2 (one hierarchy) or v1 (the memory hierarchy shows the leaves; cpu mirrors it).
    for (const fs::path& root : {fs::path("/sys/fs/cgroup/memory"), fs::path("/sys/fs/cgroup")}) {
      if (fs::exists(root / "cgroup.procs")) {
        base_ = root / name_;
        break;
      }
    }
    if (base_.empty()) GTEST_SKIP() << "no cgroup hierarchy at /sys/fs/cgroup";
  }
  void TearDown() override {
    server_.reset();
    for (const char* hierarchy : {"memory", "cpu", ""}) {
      const fs::path base = fs::path("/sys/fs/cgroup") / hierarchy / name_;
      if (name_.empty() || !fs::exists(base)) continue;
      // A supervisor or replica may still be exiting (rmdir is EBUSY until its cgroup is
      // empty): retry for a while rather than leave the test's cgroups behind on the host.
      for (int attempt = 0; attempt < 100 && fs::exists(base); ++attempt) {
        for (const fs::path& leaf : Leaves(base)) ::rmdir(leaf.c_str());
        if (::rmdir(base.c_str()) != 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }
    }
  }
  // Child cgroups of `base` (listed before any is removed: kernfs skips entries then).
  static std::vector<fs::path> Leaves(const fs::path& base) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(base)) {
      if (e.is_directory()) out.push_back(e.path());
    }
    return out;
  }
  std::vector<pid_t> Procs(const std::string& leaf) const {
    std::ifstream in(base_ / leaf / "cgroup.procs");
    std::vector<pid_t> pids;
    for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
    return pids;
  }

  std::string name_;
  fs::path base_;
};

TEST_F(DelegatedCgroupE2ETest, KillingEveryProcessInTheServersCgroupLeavesTheJobToBeReadopted) {
  const std::vector<std::string> flags = {"--cgroup-parent", "/" + name_, "--cgroup-delegated"};
  StartServer(flags);
  if (Procs("server").empty()) {
    GTEST_SKIP() << "the server did not enter a leaf cgroup here: " << server_->Stderr();
  }
  const fs::path out = dir_ / "out.txt";
  json body = {{"displayName", "survivor"},
               {"jobSpec",
                {{"workerPoolSpecs",
                  {{{"machineSpec", {{"machineType", "e2-standard-2"}}},
                    {"replicaCount", 1},
                    {"containerSpec",
                     {{"imageUri", "local"},
                      {"command", {"sh", "-c", "sleep 4; echo lived > " + out.string()}}}}}}}}}};
  HttpResult created =
      Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs", body.dump());
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const std::string name = created.body.value("name", "");
  ASSERT_EQ(WaitForJob(server_->port(), name, {"JOB_STATE_RUNNING"}).value("state", ""),
            "JOB_STATE_RUNNING");
  ASSERT_FALSE(Procs("supervisors").empty()) << "the replica's supervisor is not in its leaf";
  // Everything in the server's cgroup, until it is empty (nothing may have been forked into it).
  for (int i = 0; i < 50 && !Procs("server").empty(); ++i) {
    for (pid_t pid : Procs("server")) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(Procs("server").empty());
  server_.reset();  // reaps the killed server
  EXPECT_FALSE(Procs("supervisors").empty()) << "the kill reached the job's supervisor";
  EXPECT_FALSE(fs::exists(out)) << "the job ended before the kill: make it sleep longer";

  StartServer(flags);
  const json ended = WaitForJob(server_->port(), name, {});
  EXPECT_EQ(ended.value("state", ""), "JOB_STATE_SUCCEEDED") << ended.dump();
  EXPECT_EQ(ended["trainyardInfo"]["replicas"][0].value("restarts", -1), 0) << ended.dump();
  std::ifstream in(out);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "lived");
  // The re-adopting server found the replica's own cgroup again and removed it when it ended.
  EXPECT_EQ(Leaves(base_).size(), 2u) << "left: " << Leaves(base_).back();
}

}  // namespace
}  // namespace trainyard::e2e
