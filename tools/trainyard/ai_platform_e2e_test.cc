// Google's own gcloud, unchanged, driving AI Platform Training's API (`gcloud ai-platform jobs`,
// CLOUDSDK_API_ENDPOINT_OVERRIDES_ML) against a Trainyard server: seed 002's package flow
// (--package-path with no setup.py, built and uploaded by gcloud, pip-installed in the executor
// image, stream-logs ending by itself), the container form with a master and a worker that read
// AI Platform's TF_CONFIG and reach each other, --config hptuning.yaml in both spellings, cancel,
// list with paging, update of labels, a duplicate jobId, `submit --stream-logs` on a failing
// job, and a package whose dependencies no index can provide. Images named by the jobs run as
// host commands through the test's image catalog (container_e2e_test.cc runs the container form
// in podman). Skipped, with the reason, where gcloud or the local executor is missing.
#include <gtest/gtest.h>

#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The trainer behind eu.gcr.io/my-project/trainer:1: prints its TF_CONFIG role; --rendezvous:
// the master listens on its TF_CONFIG address and the worker says hello there; --x=V: reports
// accuracy V/10 through the hypertune metric file, as cloudml-hypertune writes it; --sleep,
// --fail: what they say.
constexpr const char* kTrainer = R"PY(import json, os, socket, sys, time
args = sys.argv[1:]
tf = json.loads(os.environ.get("TF_CONFIG", "{}"))
task = tf.get("task", {})
print("task %s %d cluster %s" % (task.get("type"), task.get("index", 0),
                                  ",".join(sorted(tf.get("cluster", {})))), flush=True)
if "--rendezvous" in args:
    cluster = tf["cluster"]
    host, port = (cluster.get("master") or cluster["chief"])[0].rsplit(":", 1)
    if task["type"] in ("master", "chief"):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, int(port)))
        s.listen(1)
        conn, _ = s.accept()
        print("master heard: " + conn.recv(100).decode().strip(), flush=True)
    else:
        for _ in range(1200):
            try:
                socket.create_connection((host, int(port))).sendall(b"hello from worker\n")
                break
            except OSError:
                time.sleep(0.1)
for a in args:
    if a.startswith("--x="):
        with open(os.environ["CLOUD_ML_HP_METRIC_FILE"], "a") as f:
            f.write(json.dumps({"accuracy": str(float(a[4:]) / 10), "global_step": "5",
                                "trial": os.environ.get("CLOUD_ML_TRIAL_ID", ""),
                                "timestamp": time.time()}) + "\n")
if "--sleep" in args:
    time.sleep(600)
if "--fail" in args:
    print("failing on purpose", flush=True)
    sys.exit(3)
print("trainer done", flush=True)
)PY";

constexpr const char* kImage = "--master-image-uri=eu.gcr.io/my-project/trainer:1";

class AiPlatformE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/bin/gcloud")) {
      GTEST_SKIP() << "gcloud is not installed (/usr/bin/gcloud): Google Cloud CLI tests skipped";
    }
    if (!HaveLocalExecutor()) GTEST_SKIP() << "needs the local executor";
    dir_ = testing::MakeTestDir();
    testing::WriteFileOrDie(dir_ / "trainer.py", kTrainer);
    // The executor image of AI Platform runtimes (Vertex's prebuilt PyTorch names) as Debian's
    // python, which has pip; the trainer image as the script above.
    testing::WriteFileOrDie(
        dir_ / "images.yaml",
        "images:\n  - uri: eu.gcr.io/*/trainer:*\n    command: [/usr/bin/python3, " +
            (dir_ / "trainer.py").string() +
            "]\n  - uri: us-docker.pkg.dev/vertex-ai/training/pytorch-*\n"
            "    command: [/usr/bin/python3]\n");
    std::string error;
    // No package index is reachable from the replicas, deterministically.
    server_ = ServerProcess::Start(
        dir_ / "data",
        {"--executor", "local", "--image-catalog", (dir_ / "images.yaml").string(), "--gpus", "0",
         "--kill-grace-seconds", "2"},
        &error,
        {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string(),
         "PIP_INDEX_URL=http://127.0.0.1:9/simple", "PIP_RETRIES=0", "PIP_TIMEOUT=2"});
    ASSERT_NE(server_, nullptr) << error;
    const std::string url = server_->endpoint() + "/";
    testing::WriteFileOrDie(dir_ / "gcloud-config" / "gce", "False");
    env_ = {"CLOUDSDK_API_ENDPOINT_OVERRIDES_ML=" + url,
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM=" + url,
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=" + url,
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING=" + url,
            "CLOUDSDK_ML_ENGINE_POLLING_INTERVAL=1",
            "CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED=False",
            "CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true",
            "CLOUDSDK_CORE_PROJECT=my-project",
            "CLOUDSDK_CONFIG=" + (dir_ / "gcloud-config").string(),
            "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
            "CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=1",
            "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=1"};
  }

  // gcloud with `args`, bounded so a command that never ends fails the test instead.
  testing::ProcessResult Gcloud(std::vector<std::string> args) {
    args.insert(args.begin(), {"timeout", "300", "gcloud"});
    return testing::RunProcess(args, "", env_);
  }
  testing::ProcessResult Submit(const std::string& job_id, std::vector<std::string> flags) {
    flags.insert(flags.begin(),
                 {"ai-platform", "jobs", "submit", "training", job_id, "--region=us-central1"});
    return Gcloud(flags);
  }
  std::string State(const std::string& job_id) {
    auto r = Gcloud({"ai-platform", "jobs", "describe", job_id, "--format=value(state)"});
    return r.out.substr(0, r.out.find('\n'));
  }
  // Polls describe until the state is one of `states` (terminal when empty); the last state.
  std::string WaitFor(const std::string& job_id, std::vector<std::string> states = {}) {
    if (states.empty()) states = {"SUCCEEDED", "FAILED", "CANCELLED"};
    std::string state;
    for (int i = 0; i < 240; ++i) {
      state = State(job_id);
      if (std::find(states.begin(), states.end(), state) != states.end()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return state;
  }
  bool HostPythonHasPip() {
    return testing::RunProcess({"/usr/bin/python3", "-c",
                                "import importlib.util as u, sys\n"
                                "sys.exit(not all(u.find_spec(m) for m in ('pip', 'setuptools')))"})
               .exit_code == 0;
  }

  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> env_;
};

// Seed 002: `trainer/__init__.py` + `trainer/task.py`, no setup.py, submitted as the article does.
TEST_F(AiPlatformE2ETest, Seed002PackageFlowRunsStreamsItsLogsAndSucceeds) {
  if (!HostPythonHasPip())
    GTEST_SKIP() << "/usr/bin/python3 has no pip (apt-get install python3-pip)";
  testing::WriteFileOrDie(dir_ / "pkg" / "trainer" / "__init__.py", "");
  testing::WriteFileOrDie(dir_ / "pkg" / "trainer" / "task.py",
                          "import sys\nprint('hello from the trainer', sys.argv[1:])\n");
  ASSERT_EQ(Gcloud({"storage", "buckets", "create", "gs://my-bucket"}).exit_code, 0);
  auto submit =
      Submit("job_pkg_1",
             {"--package-path=" + (dir_ / "pkg" / "trainer").string(), "--module-name=trainer.task",
              "--staging-bucket=gs://my-bucket", "--runtime-version=2.11", "--python-version=3.7",
              "--scale-tier=BASIC", "--", "--epochs=1"});
  ASSERT_EQ(submit.exit_code, 0) << submit.out << submit.err << server_->Stderr();
  EXPECT_NE(submit.err.find("Job [job_pkg_1] submitted successfully."), std::string::npos);
  // Follows the job until it ends, then exits by itself (it re-reads the job's endTime).
  auto logs = Gcloud({"ai-platform", "jobs", "stream-logs", "job_pkg_1", "--polling-interval=1"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("master-replica-0\t\thello from the trainer ['--epochs=1']"),
            std::string::npos)
      << logs.out;
  EXPECT_EQ(State("job_pkg_1"), "SUCCEEDED") << server_->Stderr();
  // One internal custom job in the region, named after the jobId.
  auto custom = Gcloud({"ai", "custom-jobs", "list", "--region=us-central1",
                        "--format=value(displayName,labels.trainyard-ai-platform-job)"});
  EXPECT_EQ(custom.out, "job_pkg_1\tjob_pkg_1\n") << custom.err;
}

TEST_F(AiPlatformE2ETest, MasterAndWorkerSeeAiPlatformsTfConfigAndReachEachOther) {
  auto submit = Submit(
      "job_tf", {kImage, "--scale-tier=CUSTOM", "--master-machine-type=n1-standard-4",
                 "--worker-count=1", "--worker-machine-type=n1-standard-4", "--", "--rendezvous"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  auto logs = Gcloud({"ai-platform", "jobs", "stream-logs", "job_tf", "--polling-interval=1"});
  std::string seen;
  for (const char* line : {"master-replica-0\t\ttask master 0 cluster master,worker",
                           "worker-replica-0\t\ttask worker 0 cluster master,worker",
                           "master-replica-0\t\tmaster heard: hello from worker"}) {
    seen += std::to_string(logs.out.find(line) != std::string::npos);
  }
  EXPECT_EQ(seen + " " + State("job_tf"), "111 SUCCEEDED") << logs.out << logs.err;
  // useChiefInTfConfig: TF_CONFIG's pool 0 is "chief".
  auto chief = Submit("job_chief", {kImage, "--use-chief-in-tf-config=true", "--stream-logs"});
  EXPECT_NE(chief.err.find("master-replica-0\t\ttask chief 0 cluster chief"), std::string::npos)
      << chief.err;
}

TEST_F(AiPlatformE2ETest, ConfigHptuningYamlInBothSpellingsRunsAStudy) {
  const std::string camel =
      "trainingInput:\n  scaleTier: BASIC\n  hyperparameters:\n    goal: MAXIMIZE\n"
      "    hyperparameterMetricTag: accuracy\n    maxTrials: 2\n    maxParallelTrials: 1\n"
      "    algorithm: GRID_SEARCH\n    params:\n    - parameterName: x\n      type: DISCRETE\n"
      "      discreteValues: [1, 2]\n";
  const std::string snake =
      "trainingInput:\n  scaleTier: BASIC\n  hyperparameters:\n    goal: MAXIMIZE\n"
      "    hyperparameter_metric_tag: accuracy\n    max_trials: 2\n    max_parallel_trials: 1\n"
      "    algorithm: GRID_SEARCH\n    params:\n    - parameter_name: x\n      type: DISCRETE\n"
      "      discrete_values: [1, 2]\n";
  std::string got;
  for (const auto& [id, yaml] :
       {std::pair{"job_hp_camel", camel}, std::pair{"job_hp_snake", snake}}) {
    testing::WriteFileOrDie(dir_ / (std::string(id) + ".yaml"), yaml);
    auto submit = Submit(id, {kImage, "--config=" + (dir_ / (std::string(id) + ".yaml")).string()});
    ASSERT_EQ(submit.exit_code, 0) << submit.err;
    EXPECT_EQ(WaitFor(id), "SUCCEEDED") << server_->Stderr();
    auto describe = Gcloud({"ai-platform", "jobs", "describe", id, "--format=json"});
    const json job = json::parse(describe.out, nullptr, false);
    ASSERT_TRUE(job.is_object()) << describe.err;
    const json& out = job["trainingOutput"];
    got += std::string(id) + ": " + out.value("completedTrialCount", "") + " " +
           out.value("hyperparameterMetricTag", "") + " " + out["isHyperparameterTuningJob"].dump();
    for (const auto& t : out["trials"]) {
      got += " " + t.value("trialId", "") + ":x=" + t["hyperparameters"].value("x", "") + ":" +
             t["finalMetric"]["objectiveValue"].dump() + ":" + t.value("state", "");
    }
    got += "\n";
  }
  EXPECT_EQ(got,
            "job_hp_camel: 2 accuracy true 1:x=1:0.1:SUCCEEDED 2:x=2:0.2:SUCCEEDED\n"
            "job_hp_snake: 2 accuracy true 1:x=1:0.1:SUCCEEDED 2:x=2:0.2:SUCCEEDED\n");
  auto logs =
      Gcloud({"ai-platform", "jobs", "stream-logs", "job_hp_camel", "--polling-interval=1"});
  EXPECT_NE(logs.out.find("master-replica-0\t2\ttask master 0 cluster master"), std::string::npos)
      << logs.out;
}

TEST_F(AiPlatformE2ETest, CancelListWithPagingDuplicateAndAFailedStreamedSubmit) {
  ASSERT_EQ(Submit("job_a", {kImage, "--", "--sleep"}).exit_code, 0);
  ASSERT_EQ(Submit("job_b", {kImage}).exit_code, 0);
  EXPECT_EQ(WaitFor("job_a", {"RUNNING"}), "RUNNING");
  auto cancel = Gcloud({"ai-platform", "jobs", "cancel", "job_a"});
  const std::string cancelled = WaitFor("job_a");
  auto again = Gcloud({"ai-platform", "jobs", "cancel", "job_a"});  // ended: success, as promised
  auto duplicate = Submit("job_b", {kImage});
  auto failed = Submit("job_fail", {kImage, "--stream-logs", "--", "--fail"});
  EXPECT_EQ(WaitFor("job_b"), "SUCCEEDED");
  // One job per page: gcloud follows nextPageToken to the end.
  auto list =
      Gcloud({"ai-platform", "jobs", "list", "--page-size=1", "--format=value(jobId,state)"});
  EXPECT_EQ(std::to_string(cancel.exit_code) + " [" + cancel.out + "] " + cancelled + " " +
                std::to_string(again.exit_code) + " | " + std::to_string(duplicate.exit_code) +
                " | " + std::to_string(failed.exit_code) + " " + State("job_fail"),
            "0 [] CANCELLED 0 | 1 | 1 FAILED");
  EXPECT_NE(duplicate.err.find("Resource in projects [my-project] is the subject of a conflict: "
                               "Field: job.job_id Error: A job with this id already exists."),
            std::string::npos)
      << duplicate.err;
  EXPECT_EQ(list.out, "job_fail\tFAILED\njob_b\tSUCCEEDED\njob_a\tCANCELLED\n") << list.err;
  // update: GET, then PATCH ?updateMask=labels with the merged labels.
  auto update = Gcloud({"ai-platform", "jobs", "update", "job_b", "--update-labels=owner=me"});
  auto labels =
      Gcloud({"ai-platform", "jobs", "describe", "job_b", "--format=value(labels.owner)"});
  EXPECT_EQ(std::to_string(update.exit_code) + " " + labels.out, "0 me\n") << update.err;
  EXPECT_NE(failed.err.find("failing on purpose"), std::string::npos) << failed.err;
}

// Seed 002's real package lists transformers, datasets and tqdm; without them in the image and
// without an index, the job fails at install, naming them and the fix.
TEST_F(AiPlatformE2ETest, MissingDependenciesWithoutAnIndexFailNamingThemAndTheFix) {
  if (!HostPythonHasPip())
    GTEST_SKIP() << "/usr/bin/python3 has no pip (apt-get install python3-pip)";
  testing::WriteFileOrDie(dir_ / "pkg" / "setup.py",
                          "from setuptools import setup, find_packages\n"
                          "setup(name='trainer', version='0.1', packages=find_packages(),\n"
                          "      install_requires=['transformers', 'datasets', 'tqdm'])\n");
  testing::WriteFileOrDie(dir_ / "pkg" / "trainer" / "__init__.py", "");
  testing::WriteFileOrDie(dir_ / "pkg" / "trainer" / "task.py", "print('never runs')\n");
  ASSERT_EQ(Gcloud({"storage", "buckets", "create", "gs://my-bucket"}).exit_code, 0);
  auto submit =
      Submit("job_deps", {"--package-path=" + (dir_ / "pkg" / "trainer").string(),
                          "--module-name=trainer.task", "--staging-bucket=gs://my-bucket",
                          "--runtime-version=2.11", "--python-version=3.7", "--stream-logs"});
  EXPECT_EQ(submit.exit_code, 1) << submit.err;
  EXPECT_NE(submit.err.find("transformers, datasets, tqdm"), std::string::npos) << submit.err;
  EXPECT_NE(submit.err.find("PIP_INDEX_URL"), std::string::npos) << submit.err;
  EXPECT_EQ(State("job_deps"), "FAILED");
}

}  // namespace
}  // namespace trainyard::e2e
