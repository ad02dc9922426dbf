// End-to-end tests: the real `trainyard` server on 127.0.0.1:0 with a temp data dir, driven by
// the real CLI and raw HTTP. Tests that need real processes require the LocalExecutor and are
// skipped in a build without it; the rest run with whatever executor the binary has.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;

constexpr const char* kParent = "projects/local/locations/us-central1";

class TrainyardE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    bucket_root_ = dir_ / "buckets";
    StartServer();
  }

  void StartServer(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--executor", DefaultExecutor(), "--kill-grace-seconds",
                                     "1",          "--gpus",          "0"};
    if (!HaveLocalExecutor()) args = {"--executor", "fake", "--fake-run-ms", "300"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string error;
    server_ = ServerProcess::Start(dir_ / "data", args, &error, Env());
    ASSERT_NE(server_, nullptr) << error;
  }

  std::vector<std::string> Env() const {
    return {"TRAINYARD_BUCKET_ROOT=" + bucket_root_.string()};
  }

  testing::ProcessResult Run(std::vector<std::string> args) {
    return Cli(server_->endpoint(), args, Env());
  }

  // Creates a job whose single replica runs `sh -c script`; returns its name ("" on failure).
  std::string CreateShellJob(const std::string& script, const std::string& config = "") {
    std::vector<std::string> args = {"ai", "custom-jobs", "create", "--display-name=e2e",
                                     "--format=json"};
    if (config.empty()) {
      args.push_back(
          "--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,container-image-uri="
          "local");
      args.push_back("--command=^|^sh|-c|" + script);
    } else {
      testing::WriteFileOrDie(dir_ / "job.yaml", config);
      args.push_back("--config=" + (dir_ / "job.yaml").string());
    }
    auto r = Run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json job = json::parse(r.out, nullptr, false);
    return job.is_object() ? job.value("name", "") : "";
  }

  std::filesystem::path dir_;
  std::filesystem::path bucket_root_;
  std::unique_ptr<ServerProcess> server_;
};

#define REQUIRE_LOCAL_EXECUTOR()                                 \
  if (!HaveLocalExecutor())                                      \
  GTEST_SKIP() << "built without the LocalExecutor; needs real " \
                  "processes"

// ---------- Runs with any executor ----------

TEST_F(TrainyardE2ETest, EveryInvalidSpecNamesItsFieldPath) {
  auto pool = [](const std::string& extra) {
    return R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",)"
           R"("containerSpec":{"imageUri":"local","command":["true"]})" +
           extra + "}";
  };
  auto job = [](const std::string& pools, const std::string& extra = "") {
    return R"({"displayName":"d","jobSpec":{"workerPoolSpecs":[)" + pools + "]" + extra + "}}";
  };
  std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"jobSpec":{"workerPoolSpecs":[)" + pool("") + "]}}", "displayName"},
      {job(""), "jobSpec.workerPoolSpecs"},
      {job(pool("") + "," + pool(R"(,"replicaCount":"0")")), "jobSpec.workerPoolSpecs[1]"},
      {job(pool("") + R"(,{"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"0",)"
                      R"("containerSpec":{"imageUri":"local","command":["true"]}})"),
       "jobSpec.workerPoolSpecs[1].replicaCount"},
      {job(R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"2",)"
           R"("containerSpec":{"imageUri":"local","command":["true"]}})"),
       "jobSpec.workerPoolSpecs[0].replicaCount"},
      {job(pool("") + R"(,{"replicaCount":"1","containerSpec":{"imageUri":"local"}})"),
       "jobSpec.workerPoolSpecs[1].machineSpec.machineType"},
      {job(R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",)"
           R"("containerSpec":{"imageUri":"local"}})"),
       "jobSpec.workerPoolSpecs[0].containerSpec.command"},
      {job(R"({"machineSpec":{"machineType":"n1-standard-4","acceleratorCount":1},)"
           R"("replicaCount":"1","containerSpec":{"imageUri":"local","command":["true"]}})"),
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"},
      {job(pool(R"(,"diskSpec":{"bootDiskSizeGb":1})")),
       "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskSizeGb"},
      {job(pool(""), R"(,"scheduling":{"timeout":"soon"})"), "jobSpec.scheduling.timeout"},
      {job(pool(""), R"(,"scheduling":{"strategy":"FREE"})"), "jobSpec.scheduling.strategy"},
      {job(pool(""), R"(,"baseOutputDirectory":{"outputUriPrefix":"gs://"})"),
       "jobSpec.baseOutputDirectory.outputUriPrefix"},
      {job(R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"one"})"),
       "'jobSpec.workerPoolSpecs[0].replicaCount'"},
      {job(R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCnt":"1"})"),
       "'jobSpec.workerPoolSpecs[0]'"},
  };
  if (HaveLocalExecutor()) {
    // A malformed image reference (upper case); the local executor checks references.
    cases.push_back({job(R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",)"
                         R"("containerSpec":{"imageUri":"eu.gcr.io/p/Unknown:1"}})"),
                     "jobSpec.workerPoolSpecs[0].containerSpec.imageUri"});
    cases.push_back({job(R"({"machineSpec":{"machineType":"n9-imaginary"},"replicaCount":"1",)"
                         R"("containerSpec":{"imageUri":"local","command":["true"]}})"),
                     "jobSpec.workerPoolSpecs[0]"});
    cases.push_back({job(R"({"machineSpec":{"machineType":"n1-standard-4","acceleratorType":)"
                         R"("NVIDIA_TESLA_T4","acceleratorCount":1},"replicaCount":"1",)"
                         R"("containerSpec":{"imageUri":"local","command":["true"]}})"),
                     "jobSpec.workerPoolSpecs[0]"});
  }
  std::string report;
  for (const auto& [body, path] : cases) {
    HttpResult r =
        Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs", body);
    std::string msg = r.body.is_object() ? r.body["error"].value("message", "") : "";
    if (r.status != 400 || r.body["error"].value("status", "") != "INVALID_ARGUMENT" ||
        msg.find(path) == std::string::npos) {
      report += path + " -> " + std::to_string(r.status) + " " + msg + "\n";
    }
  }
  auto list = Http(server_->port(), "GET", std::string("/v1/") + kParent + "/customJobs");
  EXPECT_EQ(report + list.body.dump(), "{}");  // nothing invalid was stored
}

TEST_F(TrainyardE2ETest, CliFlagErrorsNameTheKey) {
  auto bad_key = Run({"ai", "custom-jobs", "create", "--display-name=x",
                      "--worker-pool-spec=machine-type=n1-standard-4,replica-cnt=2,"
                      "container-image-uri=local"});
  auto bad_format = Run({"ai", "custom-jobs", "describe", "1", "--format=xml"});
  auto unknown_flag = Run({"ai", "custom-jobs", "list", "--colour=red"});
  auto bad_config = Run({"ai", "custom-jobs", "create", "--display-name=x",
                         "--config=" + (dir_ / "missing.yaml").string()});
  EXPECT_NE(bad_key.err.find("unknown key 'replica-cnt' in --worker-pool-spec"), std::string::npos)
      << bad_key.err;
  EXPECT_NE(bad_format.err.find("--format: 'xml' is not supported"), std::string::npos);
  EXPECT_NE(unknown_flag.err.find("--colour"), std::string::npos) << unknown_flag.err;
  EXPECT_NE(bad_config.err.find("missing.yaml"), std::string::npos) << bad_config.err;
  EXPECT_TRUE(bad_key.exit_code != 0 && bad_format.exit_code != 0 && unknown_flag.exit_code == 2 &&
              bad_config.exit_code != 0);
}

TEST_F(TrainyardE2ETest, TransportErrorsAreGoogleRpcStatus) {
  auto none = Http(server_->port(), "GET", "/v1/projects/p/locations/l/nothing");
  auto big = Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs",
                  std::string(2 << 20, 'x'));
  auto missing = Http(server_->port(), "GET", std::string("/v1/") + kParent + "/customJobs/42");
  EXPECT_EQ(std::to_string(none.status) + none.body["error"].value("status", "") + " " +
                std::to_string(big.status) + " " + std::to_string(missing.status) +
                missing.body["error"].value("status", ""),
            "404NOT_FOUND 413 404NOT_FOUND");
}

TEST_F(TrainyardE2ETest, ListFiltersAndPagesThroughTheCli) {
  for (const char* team : {"nlp", "cv", "nlp"}) {
    auto r = Run({"ai", "custom-jobs", "create", std::string("--display-name=job-") + team,
                  "--labels=team=" + std::string(team),
                  "--worker-pool-spec=machine-type=n1-standard-4,container-image-uri=local",
                  "--command=true"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto nlp =
      Run({"ai", "custom-jobs", "list", "--filter=labels.team=nlp", "--uri", "--page-size=1"});
  auto named =
      Run({"ai", "custom-jobs", "list", "--filter=display_name:\"job-c*\"", "--format=json"});
  auto limited = Run({"ai", "custom-jobs", "list", "--limit=2", "--uri"});
  auto bad = Run({"ai", "custom-jobs", "list", "--filter=colour=red"});
  auto count = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  json named_jobs = json::parse(named.out, nullptr, false);
  EXPECT_EQ(std::to_string(count(nlp.out)) + " " + std::to_string(named_jobs.size()) + " " +
                std::to_string(count(limited.out)) + " " + std::to_string(bad.exit_code),
            "2 1 2 1");
  EXPECT_NE(bad.err.find("filter: unknown field 'colour'"), std::string::npos) << bad.err;
}

// `trainyard storage` goes through the server's Storage API, like gcloud storage: a bucket exists
// only once created, a typo in its name is an error (not a new bucket), and a shell with another
// TRAINYARD_BUCKET_ROOT still writes the server's buckets.
TEST_F(TrainyardE2ETest, StorageCommandsGoThroughTheServerAndNeverMakeABucket) {
  testing::WriteFileOrDie(dir_ / "train.csv", "text,label\nhi,1\n");
  testing::WriteFileOrDie(dir_ / "tree/a.txt", "a");
  testing::WriteFileOrDie(dir_ / "tree/sub/b.txt", "b");
  auto typo = Run({"storage", "cp", (dir_ / "train.csv").string(), "gs://no-such-bucket2/data/"});
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_NE(typo.err.find("bucket 'no-such-bucket2' of gs://no-such-bucket2"), std::string::npos)
      << typo.err;
  EXPECT_NE(typo.err.find("trainyard storage buckets create gs://no-such-bucket2"),
            std::string::npos)
      << typo.err;
  EXPECT_FALSE(std::filesystem::exists(bucket_root_ / "no-such-bucket2"));
  auto created = Run({"storage", "buckets", "create", "gs://bucket"});
  EXPECT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.err, "Creating gs://bucket/...\n");
  EXPECT_EQ(Run({"storage", "buckets", "create", "gs://bucket"}).exit_code, 1);
  // Another shell, another TRAINYARD_BUCKET_ROOT: the CLI still writes the server's bucket.
  auto up = Cli(server_->endpoint(),
                {"storage", "cp", (dir_ / "train.csv").string(), "gs://bucket/data/"},
                {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "elsewhere").string()});
  auto tree = Run({"storage", "cp", "-r", (dir_ / "tree").string(), "gs://bucket/data/"});
  auto down = Run({"storage", "cp", "gs://bucket/data/train.csv", (dir_ / "back.csv").string()});
  auto tree_down = Run({"storage", "cp", "-r", "gs://bucket/data/tree", (dir_ / "copy").string()});
  auto missing = Run({"storage", "cp", "gs://bucket/none.csv", (dir_ / "x").string()});
  auto folder = Run({"storage", "cp", "gs://bucket/data", (dir_ / "y").string()});
  EXPECT_EQ(std::to_string(up.exit_code) + std::to_string(tree.exit_code) +
                std::to_string(down.exit_code) + std::to_string(tree_down.exit_code) +
                std::to_string(missing.exit_code) + std::to_string(folder.exit_code) + " " +
                testing::ReadFileOrDie(bucket_root_ / "bucket/data/train.csv") +
                testing::ReadFileOrDie(dir_ / "back.csv") +
                testing::ReadFileOrDie(dir_ / "copy/a.txt") +
                testing::ReadFileOrDie(dir_ / "copy/sub/b.txt"),
            "000011 text,label\nhi,1\ntext,label\nhi,1\nab")
      << up.err << tree.err << down.err << tree_down.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "elsewhere"));
  EXPECT_NE(missing.err.find("'gs://bucket/none.csv' matched no objects"), std::string::npos)
      << missing.err;
  EXPECT_NE(folder.err.find("use --recursive (-r)"), std::string::npos) << folder.err;
  EXPECT_EQ(Run({"storage", "ls", "gs://bucket/data"}).out,
            "gs://bucket/data/train.csv\ngs://bucket/data/tree/\n");
  EXPECT_EQ(Run({"storage", "ls", "-r", "gs://bucket/data/tree/"}).out,
            "gs://bucket/data/tree/a.txt\ngs://bucket/data/tree/sub/b.txt\n");
  // The server's own staging bucket (training pipelines) is listed too.
  EXPECT_EQ(Run({"storage", "ls"}).out, "gs://bucket/\ngs://trainyard-staging/\n");
  EXPECT_EQ(Run({"storage", "buckets", "list", "--format=value(name,owner.entity)"}).out,
            "bucket\tproject-owners-local\ntrainyard-staging\t\n");
  // A job's baseOutputDirectory in a bucket that does not exist is refused at create.
  testing::WriteFileOrDie(dir_ / "job.yaml", R"(baseOutputDirectory:
  outputUriPrefix: gs://my-bukcet/out
workerPoolSpecs:
- machineSpec: {machineType: n1-standard-4}
  replicaCount: 1
  containerSpec: {imageUri: local, command: ["true"]}
)");
  auto refused = Run({"ai", "custom-jobs", "create", "--display-name=typo",
                      "--config=" + (dir_ / "job.yaml").string()});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("jobSpec.baseOutputDirectory.outputUriPrefix: bucket 'my-bukcet' of "
                             "gs://my-bukcet/out does not exist"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(bucket_root_ / "my-bukcet"));
  auto emptied = Run({"storage", "buckets", "delete", "gs://bucket"});
  EXPECT_EQ(emptied.exit_code, 1);  // not empty
  // gs:// to gs:// (the server copies), local to local, and a FIFO in a directory is passed over
  // rather than read (it would block).
  ::mkfifo((dir_ / "tree/pipe").c_str(), 0600);
  auto copied = Run({"storage", "cp", "gs://bucket/data/train.csv", "gs://bucket/copy.csv"});
  auto local = Run({"storage", "cp", "-r", (dir_ / "tree").string(), (dir_ / "local").string()});
  auto tree_again = Run({"storage", "cp", "-r", (dir_ / "tree").string(), "gs://bucket/again/"});
  EXPECT_EQ(std::to_string(copied.exit_code) + std::to_string(local.exit_code) +
                std::to_string(tree_again.exit_code) + " " +
                testing::ReadFileOrDie(bucket_root_ / "bucket/copy.csv") +
                testing::ReadFileOrDie(dir_ / "local/sub/b.txt"),
            "000 text,label\nhi,1\nb")
      << copied.err << local.err << tree_again.err;
  EXPECT_EQ(Run({"storage", "ls", "-r", "gs://bucket/again"}).out,
            "gs://bucket/again/tree/a.txt\ngs://bucket/again/tree/sub/b.txt\n");
}

// --bucket-root is the one setting for the server, its storage API and replicas; it is printed.
TEST_F(TrainyardE2ETest, BucketRootFlagPlacesTheBuckets) {
  std::string error;
  auto other = ServerProcess::Start(
      dir_ / "data2", {"--executor", "fake", "--bucket-root", (dir_ / "alt").string()}, &error);
  ASSERT_NE(other, nullptr) << error;
  auto made = Cli(other->endpoint(), {"storage", "buckets", "create", "gs://alt-bkt"});
  EXPECT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "alt" / "alt-bkt"));
  EXPECT_NE(other->Stderr().find("are under " + (dir_ / "alt").string()), std::string::npos)
      << other->Stderr();
}

TEST_F(TrainyardE2ETest, SecondServerOnTheSameDataDirIsRefused) {
  std::string error;
  auto second = ServerProcess::Start(dir_ / "data", {"--executor", "fake"}, &error);
  EXPECT_EQ(second, nullptr);
  EXPECT_NE(error.find("another trainyard server is using --data-dir"), std::string::npos) << error;
}

// What Vertex's prebuilt PyTorch names run as is printed at start-up; asking for containers
// where there are none stops the server with the reason instead of failing jobs later.
TEST_F(TrainyardE2ETest, ThePrebuiltImagesChoiceIsPrintedAndAnImpossibleOneRefused) {
  EXPECT_NE(server_->Stderr().find("Vertex's prebuilt PyTorch images run as "), std::string::npos)
      << server_->Stderr();
  std::string error;
  auto impossible = ServerProcess::Start(
      dir_ / "data2", {"--executor", "fake", "--prebuilt-images", "container", "--no-containers"},
      &error);
  EXPECT_EQ(impossible, nullptr);
  EXPECT_NE(error.find("--prebuilt-images container: started with --no-containers"),
            std::string::npos)
      << error;
  auto host = ServerProcess::Start(dir_ / "data3",
                                   {"--executor", "fake", "--prebuilt-images", "host"}, &error);
  ASSERT_NE(host, nullptr) << error;
  EXPECT_NE(host->Stderr().find(
                "Vertex's prebuilt PyTorch images run as host python3: --prebuilt-images host"),
            std::string::npos)
      << host->Stderr();
}

TEST_F(TrainyardE2ETest, AcknowledgedJobsSurviveKillDashNine) {
  std::string name = CreateShellJob("sleep 2; echo survived");
  ASSERT_FALSE(name.empty());
  server_->Kill(SIGKILL);  // right after the acknowledgement
  StartServer();
  auto job = WaitForJob(server_->port(), name, {}, 60);
  // The fake executor cannot re-adopt what it was "running" (it reports FAILED with the reason);
  // the local one finds the replica and sees it through.
  std::string want = HaveLocalExecutor() ? "JOB_STATE_SUCCEEDED" : job.value("state", "");
  EXPECT_EQ(job.value("name", "") + " " + job.value("state", ""), name + " " + want)
      << server_->Stderr();
  EXPECT_NE(job.value("state", ""), "");
}

// ---------- Need the LocalExecutor ----------

TEST_F(TrainyardE2ETest, CreateRunsToSucceededWithVertexEnvInTheLogs) {
  REQUIRE_LOCAL_EXECUTOR();
  std::string name = CreateShellJob(
      "echo CLUSTER_SPEC=$CLUSTER_SPEC; echo RANK=$RANK WORLD_SIZE=$WORLD_SIZE; "
      "echo AIP_MODEL_DIR=$AIP_MODEL_DIR; echo JOB=$CLOUD_ML_JOB_ID; echo err >&2");
  auto logs = Run({"ai", "custom-jobs", "stream-logs", name});
  auto job = WaitForJob(server_->port(), name, {});
  std::string id = name.substr(name.rfind('/') + 1);
  EXPECT_EQ(job.value("state", "") + " " + std::to_string(logs.exit_code), "JOB_STATE_SUCCEEDED 0");
  for (const std::string& want :
       {std::string("[workerpool0-0] CLUSTER_SPEC={"), std::string("\"workerpool0\""),
        std::string("RANK=0 WORLD_SIZE=1"), std::string("AIP_MODEL_DIR="), "JOB=" + id,
        std::string("[workerpool0-0] err")}) {
    EXPECT_NE(logs.out.find(want), std::string::npos) << want << " not in:\n" << logs.out;
  }
}

TEST_F(TrainyardE2ETest, MultiPoolJobGetsTfConfigRoles) {
  REQUIRE_LOCAL_EXECUTOR();
  // The job succeeds when the chief exits 0 and stops the replicas still running (as on Vertex),
  // so the chief waits until both workers have printed (each touches a file afterwards).
  const std::string marks = (dir_ / "marks").string();
  std::filesystem::create_directories(marks);
  auto r = Run(
      {"ai", "custom-jobs", "create", "--display-name=dist", "--format=json",
       "--worker-pool-spec=machine-type=n1-standard-4,container-image-uri=local",
       "--worker-pool-spec=machine-type=n1-standard-4,replica-count=2,container-image-uri=local",
       "--command=^|^sh|-c|echo TF=$TF_CONFIG RANK=$RANK; touch " + marks +
           "/$RANK; i=0; while [ $RANK = 0 ] && [ $i -lt 600 ] && ! { [ -e " + marks +
           "/1 ] && [ -e " + marks + "/2 ]; }; do sleep 0.05; i=$((i+1)); done"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string name = json::parse(r.out)["name"];
  auto job = WaitForJob(server_->port(), name, {});
  auto logs = Run({"ai", "custom-jobs", "stream-logs", name, "--task-name=workerpool1-1"});
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump();
  EXPECT_NE(logs.out.find("[workerpool1-1] TF="), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("\"worker\""), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("RANK=2"), std::string::npos) << logs.out;
  EXPECT_EQ(logs.out.find("[workerpool0-0]"), std::string::npos) << logs.out;
}

// AI Platform Training's jobs through the CLI (gcloud's own client is ai_platform_e2e_test):
// submit with a --config, follow the logs to the end, describe, list, cancel of an ended job.
TEST_F(TrainyardE2ETest, AiPlatformJobsThroughTheCli) {
  REQUIRE_LOCAL_EXECUTOR();
  testing::WriteFileOrDie(dir_ / "legacy.yaml",
                          "trainingInput:\n  masterConfig:\n    imageUri: local\n"
                          "    containerCommand: [sh, -c, 'echo TF=$TF_CONFIG args=$0 $1']\n");
  auto submit =
      Run({"ai-platform", "jobs", "submit", "training", "cli_job", "--region=us-central1",
           "--config=" + (dir_ / "legacy.yaml").string(), "--stream-logs", "--", "a1", "a2"});
  auto describe = Run({"ai-platform", "jobs", "describe", "cli_job", "--format=value(state)"});
  auto list = Run({"ai-platform", "jobs", "list", "--format=value(jobId,state)"});
  auto cancel = Run({"ai-platform", "jobs", "cancel", "cli_job"});
  EXPECT_EQ(std::to_string(submit.exit_code) + " " + submit.out + describe.out + list.out +
                std::to_string(cancel.exit_code) + " [" + cancel.err + "]",
            "0 jobId: cli_job\nstate: SUCCEEDED\nSUCCEEDED\ncli_job\tSUCCEEDED\n0 []")
      << submit.err;
  EXPECT_NE(submit.err.find("master-replica-0\t\tTF={\"cluster\":{\"master\":["), std::string::npos)
      << submit.err;
  EXPECT_NE(submit.err.find("args=a1 a2"), std::string::npos) << submit.err;
}

TEST_F(TrainyardE2ETest, FailureRecordsTheExitCode) {
  REQUIRE_LOCAL_EXECUTOR();
  std::string name = CreateShellJob("", R"(workerPoolSpecs:
  - machineSpec: {machineType: n1-standard-4}
    replicaCount: 1
    containerSpec: {imageUri: local, command: [sh, -c, "echo failing; exit 3"]}
scheduling: {disableRetries: true}
)");
  auto logs = Run({"ai", "custom-jobs", "stream-logs", name});
  auto job = WaitForJob(server_->port(), name, {});
  EXPECT_EQ(job.value("state", "") + " " + std::to_string(logs.exit_code) + " " +
                job["trainyardInfo"]["replicas"][0]["exitCode"].dump(),
            "JOB_STATE_FAILED 1 3")
      << job.dump();
  EXPECT_NE(job["error"].value("message", "").find("code 3"), std::string::npos) << job.dump();
}

TEST_F(TrainyardE2ETest, FailedReplicaIsRetried) {
  REQUIRE_LOCAL_EXECUTOR();
  // Fails on its first attempt only: the work dir survives restarts.
  std::string name = CreateShellJob(
      "if [ -f attempted ]; then echo second-try-ok; exit 0; fi; touch attempted; exit 1");
  auto job = WaitForJob(server_->port(), name, {});
  EXPECT_EQ(job.value("state", "") +
                " restarts=" + job["trainyardInfo"]["replicas"][0]["restarts"].dump(),
            "JOB_STATE_SUCCEEDED restarts=1")
      << job.dump();
}

TEST_F(TrainyardE2ETest, TimeoutFailsTheJob) {
  REQUIRE_LOCAL_EXECUTOR();
  std::string name = CreateShellJob("", R"(workerPoolSpecs:
  - machineSpec: {machineType: n1-standard-4}
    replicaCount: 1
    containerSpec: {imageUri: local, command: [sleep, "60"]}
scheduling: {timeout: 1s}
)");
  auto job = WaitForJob(server_->port(), name, {}, 30);
  EXPECT_EQ(job.value("state", "") + " " + job["error"].dump(),
            "JOB_STATE_FAILED {\"code\":4,\"message\":\"timed out after 1s\"}");
}

TEST_F(TrainyardE2ETest, CancelStopsARunningJob) {
  REQUIRE_LOCAL_EXECUTOR();
  std::string name = CreateShellJob("echo started; sleep 60");
  WaitForJob(server_->port(), name, {"JOB_STATE_RUNNING"});
  auto cancel = Run({"ai", "custom-jobs", "cancel", name});
  auto job = WaitForJob(server_->port(), name, {}, 30);
  auto again = Http(server_->port(), "POST", "/v1/" + name + ":cancel", "{}");
  EXPECT_EQ(std::to_string(cancel.exit_code) + " " + job.value("state", "") + " " +
                job["error"]["code"].dump() + " " + std::to_string(again.status) +
                again.body["error"].value("status", ""),
            "0 JOB_STATE_CANCELLED 1 400FAILED_PRECONDITION");
}

TEST_F(TrainyardE2ETest, RunningJobIsReadoptedAfterKillDashNine) {
  REQUIRE_LOCAL_EXECUTOR();
  std::string name = CreateShellJob("echo before; sleep 3; echo after");
  auto running = WaitForJob(server_->port(), name, {"JOB_STATE_RUNNING"});
  ASSERT_EQ(running.value("state", ""), "JOB_STATE_RUNNING");
  server_->Kill(SIGKILL);
  StartServer();
  auto job = WaitForJob(server_->port(), name, {}, 60);
  auto logs = Http(server_->port(), "GET", "/v1/" + name + ":logs");
  std::string text;
  for (const auto& e : logs.body["entries"]) {
    // The executor adds its own "[trainyard] ..." notes (oversubscription, re-adoption).
    if (!e.value("text", "").starts_with("[trainyard]")) text += e.value("text", "") + ";";
  }
  EXPECT_EQ(job.value("state", "") + " " + text, "JOB_STATE_SUCCEEDED before;after;")
      << server_->Stderr();
}

}  // namespace
}  // namespace trainyard::e2e
