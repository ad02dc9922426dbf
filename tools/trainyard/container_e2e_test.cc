// End-to-end: jobs that name a real image run as podman containers. The real `trainyard` server
// (127.0.0.1, port 0) with private podman storage, a real Docker Registry v2 on loopback
// (scripts/registry-local.sh), and the busybox image built FROM scratch and pushed by
// scripts/build-images.sh; jobs are created with the real CLI (the article's
// --worker-pool-spec=...,container-image-uri=...) and over REST. Skipped, with the reason, where
// podman, runc, docker-registry or busybox-static is missing, when not running as root, or where
// this host cannot start a container (failed instead with TRAINYARD_REQUIRE_CONTAINERS=1, CI).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/file_util.h"
#include "e2e_harness.h"
#include "testing/container_probe.h"
#include "testing/sentiment_data.h"

namespace trainyard::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kParent = "projects/local/locations/us-central1";

bool OnPath(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

std::string Slurp(const fs::path& p) {
  auto text = ReadFile(p);
  return text.ok() ? *text : "";
}

class ContainerE2ETest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string missing;
    for (const char* p : {"podman", "runc", "docker-registry"}) {
      if (!OnPath(p)) missing += std::string(" ") + p;
    }
    if (!fs::exists("/bin/busybox")) missing += " busybox-static";
    if (!missing.empty()) {
      skip_reason_ =
          "container e2e tests need podman, runc, docker-registry and busybox-static "
          "(scripts/install-deps.sh --test); missing:" +
          missing;
      return;
    }
    if (::geteuid() != 0) {
      skip_reason_ = "container e2e tests need root (rootful podman; see docs/containers.md)";
      return;
    }
    if (!HaveLocalExecutor()) {
      skip_reason_ = "container e2e tests need the local executor";
      return;
    }
    if (std::string why = testing::ContainerHostProblem(); !why.empty()) {
      if (testing::ContainersRequired()) {
        fail_reason_ = testing::ContainersRequiredFailure(why);
      } else {
        skip_reason_ = "container e2e tests need a host that can start containers: " + why;
      }
      return;
    }
    char tmpl[] = "/tmp/trainyard-container-e2e-XXXXXX";
    suite_dir_ = ::mkdtemp(tmpl);
    // Our own registry and our own trust file, so tests never touch /etc/containers.
    std::string env = "REGISTRY_LOCAL_DIR=" + (suite_dir_ / "registry").string() +
                      " REGISTRIES_CONF_D=" + (suite_dir_ / "conf.d").string() + " ";
    const std::string source = std::getenv("TRAINYARD_SOURCE_DIR");
    ASSERT_EQ(std::system((env + source + "/scripts/registry-local.sh start >" +
                           (suite_dir_ / "registry.log").string() + " 2>&1")
                              .c_str()),
              0)
        << Slurp(suite_dir_ / "registry.log");
    registry_ = "127.0.0.1:" + Slurp(suite_dir_ / "registry" / "port");
    while (!registry_.empty() && registry_.back() == '\n') registry_.pop_back();
    registries_conf_ = suite_dir_ / "registries.conf";
    ASSERT_TRUE(WriteFileAtomic(registries_conf_,
                                "[[registry]]\nlocation = \"" + registry_ + "\"\ninsecure = true\n")
                    .ok());
    // Built in one podman storage and pushed; the server pulls it into another.
    std::string build = "CONTAINERS_REGISTRIES_CONF=" + registries_conf_.string() +
                        " TRAINYARD_REGISTRY=" + registry_ + " PODMAN='podman --root " +
                        (suite_dir_ / "build" / "storage").string() + " --runroot " +
                        (suite_dir_ / "build" / "run").string() + "' " + source +
                        "/scripts/build-images.sh busybox >" + (suite_dir_ / "build.log").string() +
                        " 2>&1";
    ASSERT_EQ(std::system(build.c_str()), 0) << Slurp(suite_dir_ / "build.log");
  }

  static void TearDownTestSuite() {
    if (suite_dir_.empty()) return;
    std::string env = "REGISTRY_LOCAL_DIR=" + (suite_dir_ / "registry").string() +
                      " REGISTRIES_CONF_D=" + (suite_dir_ / "conf.d").string() + " ";
    std::system((env + std::getenv("TRAINYARD_SOURCE_DIR") +
                 "/scripts/registry-local.sh stop >/dev/null 2>&1")
                    .c_str());
    for (const char* storage : {"build", "server"}) {
      fs::path d = suite_dir_ / storage;
      std::string p =
          "podman --root " + (d / "storage").string() + " --runroot " + (d / "run").string();
      std::system((p + " rm --all --force --time 0 >/dev/null 2>&1; " + p +
                   " rmi --all --force >/dev/null 2>&1")
                      .c_str());
    }
    fs::remove_all(suite_dir_);
  }

  void SetUp() override {
    if (!fail_reason_.empty()) FAIL() << fail_reason_;
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    dir_ = testing::MakeTestDir();
    fs::create_directories(dir_ / "buckets" / "bkt");  // the jobs' bucket, made first as on GCS
    StartServer();
  }

  // `allow_root_replicas`: see ServerProcess::Start; false runs containers as `nobody`.
  void StartServer(bool allow_root_replicas = true, std::vector<std::string> extra = {}) {
    std::string error;
    std::vector<std::string> args = {
        "--executor", "local", "--kill-grace-seconds", "5",
        "--gpus",     "0",     "--podman-storage",     (suite_dir_ / "server").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = ServerProcess::Start(dir_ / "data", args, &error, Env(), allow_root_replicas);
    ASSERT_NE(server_, nullptr) << error;
  }

  std::vector<std::string> Env() const {
    return {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string(),
            "TRAINYARD_REGISTRY=" + registry_,
            "CONTAINERS_REGISTRIES_CONF=" + registries_conf_.string()};
  }

  // Creates a job over REST from its jobSpec JSON; returns its name ("" on failure).
  // Creates a CustomJob with `job_spec` on the suite's server, or on the one at `port`.
  std::string CreateRest(const std::string& job_spec, int port = 0) {
    auto r =
        Http(port ? port : server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs",
             R"({"displayName":"c","jobSpec":)" + job_spec + "}");
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body.value("name", "");
  }

  // A pool of `count` busybox replicas running `sh -c script`.
  static std::string ShellPool(const std::string& script, int count = 1) {
    return R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":")" +
           std::to_string(count) + R"(","containerSpec":{"imageUri":"trainyard/busybox",)" +
           R"("command":["sh","-c",)" + json(script).dump() + "]}}";
  }

  // The job's log as stored so far (stream-logs follows a running job until it ends).
  std::string LogSoFar(const std::string& name) {
    std::string text;
    fs::path logs = dir_ / "data" / "jobs" / name.substr(name.rfind('/') + 1) / "logs";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(logs, ec)) text += Slurp(e.path());
    return text;
  }

  // Waits (60 s) until the job's log contains `text`.
  void WaitForLog(const std::string& name, const std::string& text) {
    for (int i = 0; i < 600 && LogSoFar(name).find(text) == std::string::npos; ++i) {
      ::usleep(100000);
    }
  }

  std::string Logs(const std::string& name) {
    return Cli(server_->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, Env()).out;
  }

  // scripts/build-images.sh bert-sentiment: the built trainyard-bert and its libraries, pushed to
  // the suite's registry as trainyard/bert-sentiment:latest (once per suite).
  void BuildBertImage(const fs::path& bert) {
    if (bert_image_built_) return;
    std::string build = "CONTAINERS_REGISTRIES_CONF=" + registries_conf_.string() +
                        " TRAINYARD_REGISTRY=" + registry_ + " TRAINYARD_BERT=" + bert.string() +
                        " PODMAN='podman --root " + (suite_dir_ / "build" / "storage").string() +
                        " --runroot " + (suite_dir_ / "build" / "run").string() + "' " +
                        std::getenv("TRAINYARD_SOURCE_DIR") +
                        "/scripts/build-images.sh bert-sentiment >" +
                        (suite_dir_ / "build-bert.log").string() + " 2>&1";
    ASSERT_EQ(std::system(build.c_str()), 0) << Slurp(suite_dir_ / "build-bert.log");
    bert_image_built_ = true;
  }

  // train.csv (`train_rows`), eval.csv and test.csv (32 each), vocab.txt into `data`.
  static void WriteSentimentData(const fs::path& data, int train_rows) {
    fs::create_directories(data);
    ASSERT_TRUE(WriteFileAtomic(data / "train.csv", testing::SentimentCsv(train_rows, 1)).ok());
    ASSERT_TRUE(WriteFileAtomic(data / "eval.csv", testing::SentimentCsv(32, 2)).ok());
    ASSERT_TRUE(WriteFileAtomic(data / "test.csv", testing::SentimentCsv(32, 3)).ok());
    ASSERT_TRUE(WriteFileAtomic(data / "vocab.txt", testing::SentimentVocab()).ok());
  }

  static std::string State(const json& job) {
    return job.value("state", "") +
           (job.contains("error") ? " " + job["error"].value("message", "") : "");
  }

  static inline bool bert_image_built_ = false;
  static inline std::string skip_reason_;
  static inline std::string fail_reason_;
  static inline fs::path suite_dir_;
  static inline std::string registry_;
  static inline fs::path registries_conf_;
  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ContainerE2ETest, TheArticlesCliJobRunsTheImageWithTheVertexEnvAndGcs) {
  // The article's flags, with an Artifact-Registry-style name the rewrite table maps to ours.
  auto r = Cli(server_->endpoint(),
               {"ai", "custom-jobs", "create", "--region=us-central1", "--display-name=article",
                "--format=json",
                "--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,"
                "container-image-uri=eu.gcr.io/my-project/trainyard/busybox:latest",
                "--command=^|^sh|-c|echo rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR; "
                "echo spec=$CLUSTER_SPEC; mkdir -p /gcs/bkt && echo from-container > "
                "/gcs/bkt/cli.txt"},
               Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string name = json::parse(r.out).value("name", "");
  json job = WaitForJob(server_->port(), name, {}, 120);
  std::string logs = Logs(name);
  EXPECT_EQ(State(job) + " | " + Slurp(dir_ / "buckets" / "bkt" / "cli.txt"),
            "JOB_STATE_SUCCEEDED | from-container\n")
      << logs;
  EXPECT_NE(logs.find("rank=0 world=1 master=127.0.0.1"), std::string::npos) << logs;
  EXPECT_NE(logs.find(R"(spec={"cluster":{"workerpool0":["127.0.0.1:)"), std::string::npos) << logs;
  EXPECT_NE(logs.find("pulling image " + registry_ + "/trainyard/busybox:latest"),
            std::string::npos)
      << logs;
}

TEST_F(ContainerE2ETest, RestJobWritesTheModelDirThroughGcsAndItsExitCodeFailsTheJob) {
  std::string ok = CreateRest(
      R"({"baseOutputDirectory":{"outputUriPrefix":"gs://bkt/run1"},"workerPoolSpecs":[)" +
      ShellPool("mkdir -p $AIP_MODEL_DIR && echo weights > $AIP_MODEL_DIR/model.txt && "
                "echo dir=$AIP_MODEL_DIR") +
      "]}");
  std::string bad = CreateRest(R"({"scheduling":{"disableRetries":true},"workerPoolSpecs":[)" +
                               ShellPool("echo failing; exit 3") + "]}");
  json ok_job = WaitForJob(server_->port(), ok, {}, 120);
  json bad_job = WaitForJob(server_->port(), bad, {}, 120);
  EXPECT_EQ(State(ok_job) + " | " + Slurp(dir_ / "buckets/bkt/run1/model/model.txt") + " | " +
                State(bad_job),
            "JOB_STATE_SUCCEEDED | weights\n | JOB_STATE_FAILED workerpool0 replica 0 exited "
            "with code 3")
      << Logs(ok);
  EXPECT_NE(Logs(ok).find("dir=/gcs/bkt/run1/model"), std::string::npos) << Logs(ok);
}

// A root server's default: the container's entrypoint runs as `nobody` (podman --user), and
// still writes its AIP_MODEL_DIR through /gcs, which the server made for it.
TEST_F(ContainerE2ETest, ContainersRunAsTheReplicaUserNotRoot) {
  server_.reset();
  StartServer(/*allow_root_replicas=*/false);
  std::string name = CreateRest(
      R"({"baseOutputDirectory":{"outputUriPrefix":"gs://bkt/unpriv"},"workerPoolSpecs":[)" +
      ShellPool("echo uid=$(id -u); echo w > $AIP_MODEL_DIR/model.txt && echo wrote") + "]}");
  json job = WaitForJob(server_->port(), name, {}, 120);
  std::string logs = Logs(name);
  EXPECT_EQ(State(job), "JOB_STATE_SUCCEEDED") << logs;
  EXPECT_NE(logs.find("uid=65534"), std::string::npos) << logs;
  EXPECT_EQ(Slurp(dir_ / "buckets/bkt/unpriv/model/model.txt"), "w\n") << logs;
}

// A pinned tag the server's storage lacks is pulled by the run itself (one podman call, its
// progress in the job log as the platform's "pull:" notes), under a root server with the
// entrypoint as `nobody`; the next job of that tag finds it present and pulls nothing.
TEST_F(ContainerE2ETest, APinnedTagIsPulledByItsFirstRunAndFoundByTheNext) {
  const std::string build = "podman --root " + (suite_dir_ / "build" / "storage").string() +
                            " --runroot " + (suite_dir_ / "build" / "run").string();
  const std::string pinned = registry_ + "/trainyard/busybox:pinned";
  ASSERT_EQ(std::system(("CONTAINERS_REGISTRIES_CONF=" + registries_conf_.string() + " " + build +
                         " tag localhost/trainyard/busybox:latest " + pinned + " && " +
                         "CONTAINERS_REGISTRIES_CONF=" + registries_conf_.string() + " " + build +
                         " push " + pinned + " >/dev/null 2>&1")
                            .c_str()),
            0);
  server_.reset();
  StartServer(/*allow_root_replicas=*/false);
  const std::string pool =
      R"j({"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",)j"
      R"j("containerSpec":{"imageUri":"trainyard/busybox:pinned",)j"
      R"j("command":["sh","-c","echo pinned-ran uid=$(id -u)"]}}]})j";
  const std::string cold = CreateRest(pool);
  EXPECT_EQ(State(WaitForJob(server_->port(), cold, {}, 120)), "JOB_STATE_SUCCEEDED") << Logs(cold);
  const std::string cold_log = LogSoFar(cold);
  EXPECT_NE(cold_log.find("pinned-ran uid=65534"), std::string::npos) << cold_log;
  EXPECT_NE(cold_log.find("[trainyard] pull: "), std::string::npos) << cold_log;
  const std::string warm = CreateRest(pool);
  EXPECT_EQ(State(WaitForJob(server_->port(), warm, {}, 120)), "JOB_STATE_SUCCEEDED") << Logs(warm);
  const std::string warm_log = LogSoFar(warm);
  EXPECT_NE(warm_log.find("pinned-ran uid=65534"), std::string::npos) << warm_log;
  EXPECT_EQ(warm_log.find("pull: "), std::string::npos) << warm_log;
}

TEST_F(ContainerE2ETest, CancelSendsSigtermToTheEntrypointAndLeavesNoContainer) {
  std::string name = CreateRest(R"({"workerPoolSpecs":[)" +
                                ShellPool("trap 'echo got-SIGTERM; exit 0' TERM; echo ready; "
                                          "while true; do sleep 0.2; done") +
                                "]}");
  WaitForJob(server_->port(), name, {"JOB_STATE_RUNNING"}, 60);
  WaitForLog(name, " O ready");
  auto cancel = Http(server_->port(), "POST", "/v1/" + name + ":cancel", "{}");
  ASSERT_EQ(cancel.status, 200) << cancel.body.dump();
  json job = WaitForJob(server_->port(), name, {}, 60);
  std::string ps =
      testing::RunProcess({"podman", "--root", (suite_dir_ / "server" / "storage").string(),
                           "--runroot", (suite_dir_ / "server" / "run").string(), "ps", "--all",
                           "--format", "{{.Names}}"})
          .out;
  EXPECT_EQ(job.value("state", "") + " ps=[" + ps + "]", "JOB_STATE_CANCELLED ps=[]");
  EXPECT_NE(Logs(name).find("got-SIGTERM"), std::string::npos) << Logs(name);
}

TEST_F(ContainerE2ETest, AMissingImageFailsFastNamingItAndAMalformedOneIsRefused) {
  std::string name = CreateRest(
      R"({"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",)"
      R"("containerSpec":{"imageUri":"eu.gcr.io/my-project/no-such-image:dev"}}]})");
  json job = WaitForJob(server_->port(), name, {}, 60);
  EXPECT_EQ(job.value("state", "") + " " + std::to_string(job["error"].value("code", 0)),
            "JOB_STATE_FAILED 9");
  std::string message = job["error"].value("message", "");
  EXPECT_TRUE(message.starts_with("IMAGE_UNAVAILABLE: ")) << message;
  EXPECT_NE(message.find("image 'eu.gcr.io/my-project/no-such-image:dev' (rewritten to '" +
                         registry_ + "/no-such-image:dev')"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("no such image in its registry"), std::string::npos) << message;

  auto bad = Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs",
                  R"({"displayName":"c","jobSpec":{"workerPoolSpecs":[{"machineSpec":)"
                  R"({"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":)"
                  R"({"imageUri":"eu.gcr.io/p/Trainer:dev"}}]}})");
  EXPECT_EQ(
      std::to_string(bad.status) + " " + bad.body["error"].value("message", "").substr(0, 107),
      "400 jobSpec.workerPoolSpecs[0].containerSpec.imageUri: 'eu.gcr.io/p/Trainer:dev' is "
      "not a valid image reference");
}

// A registry that refuses connections is tried again until the pull deadline; one that accepts
// and never answers uses it up. Either job fails naming the image, the registry and the last
// error, and a job of a reachable registry starts and succeeds meanwhile.
TEST_F(ContainerE2ETest, UnreachableAndHangingRegistriesFailTheirJobsNamingThemOthersRun) {
  server_.reset();
  StartServer(true, {"--pull-timeout-seconds", "6"});
  // Hanging: the kernel completes connections to a listening socket nobody accepts from.
  int hang = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(hang, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(hang, 16), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(hang, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string hanging = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  const std::string refusing = "127.0.0.1:" + std::to_string(testing::FreeTcpPort());
  auto pool = [](const std::string& image) {
    return R"({"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},)"
           R"("replicaCount":"1","containerSpec":{"imageUri":")" +
           image + R"("}}]})";
  };
  const std::string refused = CreateRest(pool(refusing + "/x:1"));
  const std::string hung = CreateRest(pool(hanging + "/x:1"));
  const std::string good = CreateRest("{\"workerPoolSpecs\":[" + ShellPool("echo fine") + "]}");
  EXPECT_EQ(WaitForJob(server_->port(), good, {}, 60).value("state", ""), "JOB_STATE_SUCCEEDED");
  for (const auto& [name, registry] : {std::pair{refused, refusing}, std::pair{hung, hanging}}) {
    json job = WaitForJob(server_->port(), name, {}, 60);
    std::string message = job["error"].value("message", "");
    EXPECT_EQ(job.value("state", ""), "JOB_STATE_FAILED") << message;
    EXPECT_NE(message.find("image '" + registry + "/x:1' could not be pulled from registry " +
                           registry + " in "),
              std::string::npos)
        << message;
  }
  ::close(hang);
}

// The worker's message comes from a here-document, not `echo |`: busybox nc half-closes as soon
// as its stdin ends, and the chief's stdin is /dev/null, so the worker reads EOF from the chief at
// once; had its stdin been a pipe that `echo` had not yet written, it would exit 0 having sent
// nothing (seen in CI under load). A here-document is in the pipe before nc starts.
constexpr const char* kSendRankToChief =
    "until nc $MASTER_ADDR $MASTER_PORT <<EOF\nhello-from-rank-$RANK\nEOF\ndo sleep 0.2; done";

TEST_F(ContainerE2ETest, ChiefAndWorkerContainersTalkOverMasterAddr) {
  std::string chief = "echo chief-listening; nc -l -p $MASTER_PORT";
  std::string worker = kSendRankToChief;
  std::string name =
      CreateRest(R"({"workerPoolSpecs":[)" + ShellPool(chief) + "," + ShellPool(worker) + "]}");
  json job = WaitForJob(server_->port(), name, {}, 120);
  std::string logs = Logs(name);
  EXPECT_EQ(State(job), "JOB_STATE_SUCCEEDED") << logs;
  EXPECT_NE(logs.find("[workerpool0-0] hello-from-rank-1"), std::string::npos) << logs;
}

// AI Platform Training's container form through the real gcloud (`gcloud ai-platform jobs`):
// --master-image-uri from the registry, CUSTOM tier with one worker; both read AI Platform's
// TF_CONFIG (pool 0 is "master") and the worker reaches the master at its TF_CONFIG address.
TEST_F(ContainerE2ETest, AiPlatformMasterAndWorkerReadTfConfigAndTalk) {
  if (!fs::exists("/usr/bin/gcloud")) GTEST_SKIP() << "gcloud is not installed (/usr/bin/gcloud)";
  const std::string script =
      "echo tf=$TF_CONFIG; a=$(echo \"$TF_CONFIG\" | sed "
      "'s/.*\"master\":\\[\"\\([^\"]*\\)\".*/\\1/'); "
      "case \"$TF_CONFIG\" in *'\"type\":\"master\"'*) nc -l -p ${a##*:} ;; "
      "*) until nc ${a%:*} ${a##*:} <<EOF\nhello-from-the-worker\nEOF\ndo sleep 0.2; done ;; esac";
  testing::WriteFileOrDie(dir_ / "gcloud" / "gce", "False");
  std::vector<std::string> env = {
      "CLOUDSDK_API_ENDPOINT_OVERRIDES_ML=" + server_->endpoint() + "/",
      "CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING=" + server_->endpoint() + "/",
      "CLOUDSDK_ML_ENGINE_POLLING_INTERVAL=1",
      "CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true",
      "CLOUDSDK_CORE_PROJECT=my-project",
      "CLOUDSDK_CONFIG=" + (dir_ / "gcloud").string(),
      "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
      "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=1"};
  auto submit = testing::RunProcess(
      {"timeout", "300", "gcloud", "ai-platform", "jobs", "submit", "training", "job_tf",
       "--region=us-central1", "--master-image-uri=eu.gcr.io/my-project/trainyard/busybox:latest",
       "--scale-tier=CUSTOM", "--master-machine-type=n1-standard-4", "--worker-count=1",
       "--worker-machine-type=n1-standard-4", "--stream-logs", "--", "sh", "-c", script},
      "", env);
  EXPECT_EQ(submit.exit_code, 0) << submit.out << submit.err;
  std::string seen;
  for (const char* line :
       {"master-replica-0\t\ttf={\"cluster\":{\"master\":[",
        "worker-replica-0\t\ttf={\"cluster\":{\"master\":[",
        "\"task\":{\"type\":\"worker\",\"index\":0", "master-replica-0\t\thello-from-the-worker"}) {
    seen += std::to_string(submit.err.find(line) != std::string::npos);
  }
  EXPECT_EQ(seen, "1111") << submit.err;
}

TEST_F(ContainerE2ETest, AContainerKeepsRunningThroughAServerKillAndIsReadopted) {
  std::string name = CreateRest(R"({"scheduling":{"disableRetries":true},"workerPoolSpecs":[)" +
                                ShellPool("echo before; sleep 6; echo after; exit 4") + "]}");
  WaitForJob(server_->port(), name, {"JOB_STATE_RUNNING"}, 60);
  WaitForLog(name, " O before");
  server_->Kill(SIGKILL);
  StartServer();
  json job = WaitForJob(server_->port(), name, {}, 120);
  std::string logs = Logs(name);
  EXPECT_EQ(State(job), "JOB_STATE_FAILED workerpool0 replica 0 exited with code 4") << logs;
  EXPECT_NE(logs.find("re-adopting the job"), std::string::npos) << logs;
  EXPECT_NE(logs.find("after"), std::string::npos) << logs;
}

// The trainer's image (scripts/build-images.sh bert-sentiment: the built trainyard-bert and its
// libraries) trains to exactly the metrics the same binary reaches as a host command.
TEST_F(ContainerE2ETest, TheBertImageTrainsToTheSameMetricsAsTheHostBinary) {
  const fs::path bert = testing::ToolPath("trainyard-bert");
  const std::string source = std::getenv("TRAINYARD_SOURCE_DIR");
  if (!fs::exists(bert) || !fs::exists(fs::path(source) / "data/sample/vocab.txt")) {
    GTEST_SKIP() << "needs trainyard-bert (a LibTorch build) and data/sample/vocab.txt";
  }
  ASSERT_NO_FATAL_FAILURE(BuildBertImage(bert));
  ASSERT_NO_FATAL_FAILURE(WriteSentimentData(dir_ / "buckets" / "bkt" / "data", 96));
  // The catalog maps trainyard/bert-sentiment to the host binary; named with its registry it is
  // the image.
  // The image's ENTRYPOINT is the binary, so its args start with the subcommand; the catalog's
  // host command already includes it (`trainyard-bert train`).
  auto job = [&](const std::string& image, const std::string& out) {
    json args = json::array(
        {"--training-file=gs://bkt/data/train.csv", "--validation-file=gs://bkt/data/eval.csv",
         "--testing-file=gs://bkt/data/test.csv", "--vocab=gs://bkt/data/vocab.txt", "--epochs=1",
         "--batch-size=16", "--max-length=24", "--threads=1", "--seed=7"});
    if (out == "image") args.insert(args.begin(), "train");
    json pool = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
                 {"replicaCount", "1"},
                 {"containerSpec", {{"imageUri", image}, {"args", args}}}};
    return CreateRest(json{{"workerPoolSpecs", json::array({pool})},
                           {"baseOutputDirectory", {{"outputUriPrefix", "gs://bkt/" + out}}},
                           {"scheduling", {{"disableRetries", true}}}}
                          .dump());
  };
  std::string host = job("trainyard/bert-sentiment", "host");
  std::string image = job(registry_ + "/trainyard/bert-sentiment:latest", "image");
  json host_job = WaitForJob(server_->port(), host, {}, 300);
  json image_job = WaitForJob(server_->port(), image, {}, 300);
  ASSERT_EQ(State(host_job) + " | " + State(image_job), "JOB_STATE_SUCCEEDED | JOB_STATE_SUCCEEDED")
      << Logs(host) << Logs(image);
  auto metrics = [&](const std::string& out) {
    json m = json::parse(Slurp(dir_ / "buckets/bkt" / out / "model/metrics.json"), nullptr, false);
    if (!m.is_object()) return std::string("no metrics.json");
    return json{{"train", m["train"]},
                {"validation", m["validation"]},
                {"test", m["test"]},
                {"global_step", m["global_step"]}}
        .dump();
  };
  EXPECT_EQ(metrics("image"), metrics("host"));
  EXPECT_NE(metrics("host"), "no metrics.json");
  EXPECT_NE(Logs(image).find("pulling image " + registry_ + "/trainyard/bert-sentiment:latest"),
            std::string::npos);
}

// Issue 24 in a container run as `nobody` (podman --user): with a bucket made by hand (root's,
// 0755) the server makes the output dirs for that user and the bucket group, so the export lands;
// a --job-dir the user cannot write fails the job at once (exit 78, no restart), naming the path,
// before the trainer reads its data.
TEST_F(ContainerE2ETest, TheBertImageAsNobodyExportsIntoAHandMadeBucketOrFailsAtOnce) {
  const fs::path bert = testing::ToolPath("trainyard-bert");
  if (!fs::exists(bert)) GTEST_SKIP() << "needs trainyard-bert (a LibTorch build)";
  ASSERT_NO_FATAL_FAILURE(BuildBertImage(bert));
  ASSERT_NO_FATAL_FAILURE(WriteSentimentData(dir_ / "buckets" / "bkt" / "data", 96));
  for (const char* d : {"bkt", "bkt/data"}) ::chmod((dir_ / "buckets" / d).c_str(), 0755);
  fs::create_directories(dir_ / "buckets" / "locked");
  ::chmod((dir_ / "buckets" / "locked").c_str(), 0700);
  server_.reset();
  StartServer(/*allow_root_replicas=*/false);
  auto job = [&](const std::string& base, const std::string& job_dir) {
    json args =
        json::array({"train", "--training-file=gs://bkt/data/train.csv",
                     "--validation-file=gs://bkt/data/eval.csv", "--vocab=gs://bkt/data/vocab.txt",
                     "--epochs=1", "--batch-size=16", "--max-length=24", "--threads=1"});
    if (!job_dir.empty()) args.push_back("--job-dir=" + job_dir);
    json pool = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
                 {"replicaCount", "1"},
                 {"containerSpec",
                  {{"imageUri", registry_ + "/trainyard/bert-sentiment:latest"}, {"args", args}}}};
    return CreateRest(json{{"workerPoolSpecs", json::array({pool})},
                           {"baseOutputDirectory", {{"outputUriPrefix", base}}}}
                          .dump());
  };
  const std::string ok = job("gs://bkt/out", "");
  const std::string bad = job("gs://bkt/out-bad", "gs://locked/model");
  json ok_job = WaitForJob(server_->port(), ok, {}, 300);
  json bad_job = WaitForJob(server_->port(), bad, {}, 300);
  EXPECT_EQ(State(ok_job), "JOB_STATE_SUCCEEDED") << Logs(ok);
  EXPECT_TRUE(fs::exists(dir_ / "buckets/bkt/out/model/model.safetensors")) << Logs(ok);
  const std::string want =
      "JOB_STATE_FAILED workerpool0 replica 0 exited with code 78 (a configuration error, not "
      "restarted): trainyard-bert train: --job-dir /gcs/locked/model: cannot create directory "
      "/gcs/locked/model.tmp.";
  const std::string got = State(bad_job);
  EXPECT_EQ(got.substr(0, want.size()) + " | restarts " +
                std::to_string(bad_job["trainyardInfo"]["replicas"][0].value("restarts", -1)) +
                " | data read " +
                std::to_string(Logs(bad).find("Read and tokenized") != std::string::npos),
            want + " | restarts 0 | data read 0")
      << got << "\n"
      << Logs(bad);
}

// pythonPackageSpec with the user's executor image: `python3 -m MODULE ARGS` in the image, the
// packages on PYTHONPATH as the container sees them (gs:// under /gcs, a local one mounted).
// The image's python3 is a shell script that reports what it was given.
TEST_F(ContainerE2ETest, APythonPackageRunsInItsExecutorImage) {
  const fs::path ctx = dir_ / "fakepy";
  fs::create_directories(ctx);
  ASSERT_TRUE(WriteFileAtomic(ctx / "python3",
                              "#!/bin/sh\necho \"python3 $* PYTHONPATH=$PYTHONPATH\"\n"
                              "IFS=:; for p in $PYTHONPATH; do cat \"$p/marker.txt\"; done\n")
                  .ok());
  fs::permissions(ctx / "python3", fs::perms::owner_all | fs::perms::group_exec |
                                       fs::perms::others_exec | fs::perms::others_read |
                                       fs::perms::group_read);
  ASSERT_TRUE(
      WriteFileAtomic(ctx / "Containerfile",
                      "FROM localhost/trainyard/busybox:latest\nCOPY python3 /bin/python3\n")
          .ok());
  const std::string podman = "CONTAINERS_REGISTRIES_CONF=" + registries_conf_.string() +
                             " podman --root " + (suite_dir_ / "build" / "storage").string() +
                             " --runroot " + (suite_dir_ / "build" / "run").string();
  const std::string image = registry_ + "/trainyard/fakepy:v1";
  std::string build = podman + " build -q -t " + image + " " + ctx.string() + " >" +
                      (dir_ / "build.log").string() + " 2>&1 && " + podman + " push " + image +
                      " >>" + (dir_ / "build.log").string() + " 2>&1";
  ASSERT_EQ(std::system(build.c_str()), 0) << Slurp(dir_ / "build.log");
  const fs::path local_pkg = dir_ / "localpkg";
  fs::create_directories(local_pkg);
  fs::create_directories(dir_ / "buckets/bkt/pkgs/trainer");
  ASSERT_TRUE(WriteFileAtomic(local_pkg / "marker.txt", "local-package\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "buckets/bkt/pkgs/trainer/marker.txt", "gcs-package\n").ok());
  json pool = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
               {"replicaCount", "1"},
               {"pythonPackageSpec",
                {{"executorImageUri", "eu.gcr.io/my-project/trainyard/fakepy:v1"},
                 {"packageUris", {"gs://bkt/pkgs/trainer", local_pkg.string()}},
                 {"pythonModule", "trainer.task"},
                 {"args", {"--lr=0.1"}}}}};
  std::string name = CreateRest(json{{"workerPoolSpecs", json::array({pool})}}.dump());
  json job = WaitForJob(server_->port(), name, {}, 120);
  std::string logs = Logs(name);
  EXPECT_EQ(State(job), "JOB_STATE_SUCCEEDED") << logs;
  for (const std::string& want :
       {"python3 -m trainer.task --lr=0.1 PYTHONPATH=/gcs/bkt/pkgs/trainer:" + local_pkg.string(),
        std::string("gcs-package"), std::string("local-package")}) {
    EXPECT_NE(logs.find(want), std::string::npos) << want << " not in\n" << logs;
  }
}

// The same containers on Slurm: each task of the allocation runs its container with podman on its
// node (trainyard-slurm-task); chief and worker rendezvous over MASTER_ADDR and /gcs is the bucket.
// Skipped without an idle Slurm node (scripts/slurm-local.sh start --nodes 2).
TEST_F(ContainerE2ETest, OnSlurmEachTaskRunsItsContainer) {
  if (std::string why = SlurmSkipReason(); !why.empty()) GTEST_SKIP() << why;
  std::string error;
  auto slurm = ServerProcess::Start(
      dir_ / "slurm-data", {"--executor", "slurm", "--kill-grace-seconds", "5"}, &error, Env());
  ASSERT_NE(slurm, nullptr) << error;
  std::string chief =
      "echo rank=$RANK; mkdir -p /gcs/bkt && echo slurm > /gcs/bkt/slurm.txt; "
      "nc -l -p $MASTER_PORT > /gcs/bkt/heard.txt; cat /gcs/bkt/heard.txt";
  std::string worker = kSendRankToChief;
  std::string name = CreateRest(
      R"({"workerPoolSpecs":[)" + ShellPool(chief) + "," + ShellPool(worker) + "]}", slurm->port());
  ASSERT_FALSE(name.empty());
  json job = WaitForJob(slurm->port(), name, {}, 180);
  std::string logs = Cli(slurm->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, Env()).out;
  EXPECT_EQ(State(job) + " | " + Slurp(dir_ / "buckets/bkt/slurm.txt"),
            "JOB_STATE_SUCCEEDED | slurm\n")
      << logs << slurm->Stderr();
  // What the chief heard from the worker over MASTER_ADDR, in /gcs and as the chief's last line,
  // printed just before its container exits.
  EXPECT_EQ(Slurp(dir_ / "buckets/bkt/heard.txt"), "hello-from-rank-1\n") << logs;
  EXPECT_NE(logs.find("hello-from-rank-1"), std::string::npos) << logs;
  EXPECT_NE(logs.find("pulling image " + registry_ + "/trainyard/busybox:latest"),
            std::string::npos)
      << logs;
  EXPECT_EQ(testing::RunProcess({"podman", "ps", "--all", "--filter",
                                 "label=trainyard.job=" + name.substr(name.rfind('/') + 1),
                                 "--format", "{{.Names}}"})
                .out,
            "");

  // An image no registry has: the task's start-error file fails the gang with IMAGE_UNAVAILABLE
  // (code 9) naming the image, through the real daemons, without a restart.
  auto missing = Http(slurm->port(), "POST", std::string("/v1/") + kParent + "/customJobs",
                      R"({"displayName":"m","jobSpec":{"workerPoolSpecs":[{"machineSpec":)"
                      R"({"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":)"
                      R"({"imageUri":"eu.gcr.io/my-project/no-such-image:dev"}}]}})");
  ASSERT_EQ(missing.status, 200) << missing.body.dump();
  json failed = WaitForJob(slurm->port(), missing.body.value("name", ""), {}, 180);
  const std::string why = failed.contains("error") ? failed["error"].value("message", "") : "";
  EXPECT_EQ(failed.value("state", "") + " " +
                std::to_string(failed.contains("error") ? failed["error"].value("code", 0) : 0),
            "JOB_STATE_FAILED 9")
      << failed.dump();
  EXPECT_TRUE(why.starts_with("IMAGE_UNAVAILABLE: ")) << why;
  EXPECT_NE(why.find("eu.gcr.io/my-project/no-such-image:dev"), std::string::npos) << why;

  // Cancel: scancel's SIGTERM reaches the container's entrypoint on its node.
  std::string cancelled = CreateRest(R"({"workerPoolSpecs":[)" +
                                         ShellPool("trap 'echo got-SIGTERM; exit 0' TERM; "
                                                   "echo ready; while true; do sleep 0.2; done") +
                                         "]}",
                                     slurm->port());
  ASSERT_FALSE(cancelled.empty());
  WaitForJob(slurm->port(), cancelled, {"JOB_STATE_RUNNING"}, 120);
  for (int i = 0; i < 600; ++i) {
    auto read = Http(slurm->port(), "GET", "/v1/" + cancelled + ":logs");
    if (read.body.dump().find("ready") != std::string::npos) break;
    ::usleep(100000);
  }
  ASSERT_EQ(Http(slurm->port(), "POST", "/v1/" + cancelled + ":cancel", "{}").status, 200);
  json end = WaitForJob(slurm->port(), cancelled, {}, 120);
  std::string cancel_logs =
      Cli(slurm->endpoint(), {"ai", "custom-jobs", "stream-logs", cancelled}, Env()).out;
  EXPECT_EQ(end.value("state", ""), "JOB_STATE_CANCELLED") << cancel_logs;
  EXPECT_NE(cancel_logs.find("got-SIGTERM"), std::string::npos) << cancel_logs << slurm->Stderr();
  EXPECT_EQ(testing::RunProcess({"podman", "ps", "--all", "--format", "{{.Names}}"})
                .out.find("trainyard-" + cancelled.substr(cancelled.rfind('/') + 1)),
            std::string::npos);
  std::system(("podman rmi --force " + registry_ + "/trainyard/busybox:latest >/dev/null 2>&1")
                  .c_str());  // tasks use podman's default storage
}

// Slurm's accounting covers the container: trainyard-container-run is the subreaper of what
// podman starts, so conmon and the container stay in the step's process tree, where
// jobacct_gather/linux (sstat while it runs, sacct after) sums their memory. The container holds
// a 150 MiB buffer (busybox dd's block, blocked writing into a pipe nobody reads).
TEST_F(ContainerE2ETest, OnSlurmTheStepsAccountingCountsTheContainer) {
  if (std::string why = SlurmSkipReason(); !why.empty()) GTEST_SKIP() << why;
  std::string error;
  auto slurm = ServerProcess::Start(dir_ / "slurm-data", {"--executor", "slurm"}, &error, Env());
  ASSERT_NE(slurm, nullptr) << error;
  const std::string name = CreateRest(
      R"({"workerPoolSpecs":[)" +
          ShellPool("dd if=/dev/zero bs=150M count=1 2>/dev/null | (echo holding; sleep 8)") + "]}",
      slurm->port());
  ASSERT_FALSE(name.empty());
  std::string slurm_job;
  int64_t max_rss_kib = 0;
  std::string sstat_seen;
  for (int i = 0; i < 600 && max_rss_kib < 150 * 1024; ++i) {
    ::usleep(100000);
    const std::string logs = Http(slurm->port(), "GET", "/v1/" + name + ":logs").body.dump();
    std::smatch m;
    if (slurm_job.empty() &&
        std::regex_search(logs, m, std::regex(R"(submitted to Slurm as job (\d+))"))) {
      slurm_job = m[1];
    }
    if (slurm_job.empty() || logs.find("holding") == std::string::npos) continue;
    auto sstat = testing::RunProcess({"sstat", "--allsteps", "--noheader", "--parsable2",
                                      "--format=JobID,MaxRSS", "-j", slurm_job});
    if (sstat.exit_code != 0 || sstat.out.empty()) break;  // the step has ended
    sstat_seen = sstat.out;
    std::istringstream lines(sstat.out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch rss;
      if (!std::regex_search(line, rss, std::regex(R"(\|(\d+(?:\.\d+)?)([KMG]?)$)"))) continue;
      const double scale = rss[2] == "G" ? 1024.0 * 1024 : rss[2] == "M" ? 1024.0 : 1.0;
      max_rss_kib = std::max(max_rss_kib, static_cast<int64_t>(std::stod(rss[1]) * scale));
    }
  }
  EXPECT_GE(max_rss_kib, 150 * 1024) << "sstat of Slurm job " << slurm_job << ":\n" << sstat_seen;
  json job = WaitForJob(slurm->port(), name, {}, 180);
  EXPECT_EQ(State(job), "JOB_STATE_SUCCEEDED") << slurm->Stderr();
}

// The issue's bar on Slurm: the two-worker data-parallel BERT job (chief + worker, c10d over
// MASTER_ADDR) runs from the trainer's image, one container per task on its node.
TEST_F(ContainerE2ETest, TheBertImageTrainsTwoDataParallelWorkersOnSlurm) {
  if (std::string why = SlurmSkipReason(); !why.empty()) GTEST_SKIP() << why;
  const fs::path bert = testing::ToolPath("trainyard-bert");
  if (!fs::exists(bert)) GTEST_SKIP() << "needs trainyard-bert (a LibTorch build)";
  ASSERT_NO_FATAL_FAILURE(BuildBertImage(bert));
  ASSERT_NO_FATAL_FAILURE(WriteSentimentData(dir_ / "buckets" / "bkt" / "data", 96));
  std::string error;
  auto slurm = ServerProcess::Start(
      dir_ / "slurm-data", {"--executor", "slurm", "--kill-grace-seconds", "5"}, &error, Env());
  ASSERT_NE(slurm, nullptr) << error;
  json args = json::array({"train", "--training-file=gs://bkt/data/train.csv",
                           "--validation-file=gs://bkt/data/eval.csv",
                           "--testing-file=gs://bkt/data/test.csv",
                           "--vocab=gs://bkt/data/vocab.txt", "--epochs=1", "--batch-size=8",
                           "--max-length=24", "--threads=1", "--check-replicas"});
  json pool = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
               {"replicaCount", "1"},
               {"containerSpec",
                {{"imageUri", registry_ + "/trainyard/bert-sentiment:latest"}, {"args", args}}}};
  auto r = Http(slurm->port(), "POST", std::string("/v1/") + kParent + "/customJobs",
                json{{"displayName", "bert-slurm"},
                     {"jobSpec",
                      {{"workerPoolSpecs", json::array({pool, pool})},
                       {"baseOutputDirectory", {{"outputUriPrefix", "gs://bkt/slurm-bert"}}},
                       {"scheduling", {{"disableRetries", true}}}}}}
                    .dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const std::string name = r.body.value("name", "");
  json job = WaitForJob(slurm->port(), name, {}, 480);
  std::string logs = Cli(slurm->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, Env()).out;
  ASSERT_EQ(State(job), "JOB_STATE_SUCCEEDED") << logs << slurm->Stderr();
  for (const char* line : {"Data-parallel replica: rank 0/2", "Data-parallel replica: rank 1/2",
                           "Global batch size: 8 per replica x 2 replicas = 16"}) {
    EXPECT_NE(logs.find(line), std::string::npos) << line << "\n" << logs;
  }
  json metrics =
      json::parse(Slurp(dir_ / "buckets/bkt/slurm-bert/model/metrics.json"), nullptr, false);
  ASSERT_TRUE(metrics.is_object()) << logs;
  EXPECT_EQ(metrics["test"].value("examples", 0), 32);
  EXPECT_TRUE(fs::exists(dir_ / "buckets/bkt/slurm-bert/model/model.safetensors"));
}

}  // namespace
}  // namespace trainyard::e2e
