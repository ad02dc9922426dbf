// Google's own gcloud CLI, unchanged, against a Trainyard server: the article's job.sh flow with
// `gcloud storage` for the data and `gcloud ai custom-jobs` for the job (create, describe until
// done, stream-logs), `gcloud storage cat` of what the job wrote, `gcloud logging read`, a
// Python source archive through --python-package-uris, and an HP-tuning job through
// `gcloud ai hp-tuning-jobs`, and `gcloud ai models list/describe/upload/list-version/
// delete-version/delete` on a model a training pipeline registered (gcloud has no pipeline
// command: the pipeline is created over REST, as the SDKs do). Skipped (with the reason) where
// gcloud is not installed.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;

// Plays the article's trainer: reads its splits through the Cloud Storage API of the server
// (STORAGE_EMULATOR_HOST, as google-cloud-storage/gcsfs inside a job would), prints epoch lines
// and uploads its metrics next to --job-dir.
constexpr const char* kTrainer = R"SH(#!/bin/sh
set -e
for a in "$@"; do
  case "$a" in
    --training-file=gs://*|--validation-file=gs://*|--testing-file=gs://*)
      uri="${a#*=gs://}"; bucket="${uri%%/*}"; name=$(printf %s "${uri#*/}" | sed 's|/|%2F|g')
      n=$(curl -sf "$STORAGE_EMULATOR_HOST/storage/v1/b/$bucket/o/$name?alt=media" | wc -l)
      echo "read $n lines from gs://$uri";;
    --job-dir=gs://*) dir="${a#*=gs://}";;
  esac
done
for e in 1 2; do echo "Epoch $e/2 loss=0.$((5 - e)) accuracy=0.9$e"; done
bucket="${dir%%/*}"; name=$(printf %s "$(dirname "${dir#*/}")/metrics.json" | sed 's|/|%2F|g')
echo '{"accuracy": 0.92}' | curl -sf -X POST -H 'Content-Type: application/json' --data-binary @- \
  "$STORAGE_EMULATOR_HOST/upload/storage/v1/b/$bucket/o?uploadType=media&name=$name" > /dev/null
)SH";

constexpr const char* kJobSh = R"(# job.sh, with gcloud itself
export PROJECT_ID=my-project
export BUCKET=my-bucket
export REGION="europe-west4"
export JOB_NAME="pytorch_bert_training"
export MACHINE_TYPE="n1-standard-4"
export IMAGE_URI="eu.gcr.io/$PROJECT_ID/pt_bert_sentiment:dev"

gcloud ai custom-jobs create \
--region=$REGION \
--display-name=$JOB_NAME \
--worker-pool-spec=machine-type=$MACHINE_TYPE,replica-count=1,container-image-uri=$IMAGE_URI \
--args=\
--training-file=gs://$BUCKET/data/train.csv,\
--validation-file=gs://$BUCKET/data/eval.csv,\
--testing-file=gs://$BUCKET/data/test.csv,\
--job-dir=gs://$BUCKET/model/model.pt,\
--epochs=2
)";

class GcloudE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/bin/gcloud")) {
      GTEST_SKIP() << "gcloud is not installed (/usr/bin/gcloud): Google Cloud CLI tests skipped";
    }
    if (!HaveLocalExecutor()) GTEST_SKIP() << "needs the local executor";
    dir_ = testing::MakeTestDir();
    testing::WriteFileOrDie(dir_ / "trainer.sh", kTrainer);
    testing::WriteFileOrDie(
        dir_ / "images.yaml",
        "images:\n  - uri: eu.gcr.io/*/pt_bert_sentiment:*\n    command: [sh, " +
            (dir_ / "trainer.sh").string() +
            "]\n  - uri: europe-docker.pkg.dev/vertex-ai/training/sklearn-cpu.*\n"
            "    command: [/usr/bin/python3]\n");
    std::string error;
    server_ = ServerProcess::Start(
        dir_ / "data",
        {"--executor", "local", "--image-catalog", (dir_ / "images.yaml").string(), "--gpus", "0"},
        &error, {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()});
    ASSERT_NE(server_, nullptr) << error;
    const std::string url = server_->endpoint() + "/";
    env_ = {"CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM=" + url,
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=" + url,
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING=" + url,
            "CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true",
            "CLOUDSDK_CORE_PROJECT=my-project",
            "CLOUDSDK_CONFIG=" + (dir_ / "gcloud-config").string(),
            "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
            "CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=1",
            "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=1"};
  }

  testing::ProcessResult Gcloud(std::vector<std::string> args) {
    args.insert(args.begin(), "gcloud");
    return testing::RunProcess(args, "", env_);
  }

  // Runs `describe` until the job's state is terminal; returns the last state.
  std::string WaitDone(const std::string& kind, const std::string& id) {
    std::string state;
    for (int i = 0; i < 120; ++i) {
      auto r =
          Gcloud({"ai", kind, "describe", id, "--region=europe-west4", "--format=value(state)"});
      state = r.out.substr(0, r.out.find('\n'));
      if (state == "JOB_STATE_SUCCEEDED" || state == "JOB_STATE_FAILED" ||
          state == "JOB_STATE_CANCELLED") {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return state;
  }

  std::filesystem::path dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> env_;
};

TEST_F(GcloudE2ETest, ArticleJobShWithGcloudStorageAiAndLogging) {
  auto mb = Gcloud({"storage", "buckets", "create", "gs://my-bucket"});
  ASSERT_EQ(mb.exit_code, 0) << mb.err;
  for (const char* split : {"train", "eval", "test"}) {
    testing::WriteFileOrDie(dir_ / (std::string(split) + ".csv"), "text,label\ngood,2\nbad,0\n");
  }
  auto cp = Gcloud({"storage", "cp", (dir_ / "train.csv").string(), (dir_ / "eval.csv").string(),
                    "gs://my-bucket/data/"});
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  // gsutil reaches a non-Google endpoint only through its gcloud storage shim (plain gsutil
  // always dials storage.googleapis.com over HTTPS); docs/api.md says how to turn it on.
  auto gsutil = testing::RunProcess({"gsutil", "-o", "GSUtil:use_gcloud_storage=True", "cp",
                                     (dir_ / "test.csv").string(), "gs://my-bucket/data/"},
                                    "", env_);
  ASSERT_EQ(gsutil.exit_code, 0) << gsutil.out << gsutil.err;
  auto ls = Gcloud({"storage", "ls", "gs://my-bucket/data/"});
  EXPECT_EQ(ls.out,
            "gs://my-bucket/data/eval.csv\ngs://my-bucket/data/test.csv\n"
            "gs://my-bucket/data/train.csv\n")
      << ls.err;

  testing::WriteFileOrDie(dir_ / "job.sh", kJobSh);
  auto create = testing::RunProcess({"bash", (dir_ / "job.sh").string()}, "", env_);
  ASSERT_EQ(create.exit_code, 0) << create.out << create.err;
  std::smatch m;
  const std::string created = create.out + create.err;
  ASSERT_TRUE(std::regex_search(created, m, std::regex(R"(customJobs/(\d+))"))) << created;
  const std::string id = m[1];

  EXPECT_EQ(WaitDone("custom-jobs", id), "JOB_STATE_SUCCEEDED") << server_->Stderr();
  // stream-logs resumes with '((timestamp="T" AND insertId>"I") OR timestamp>"T")'
  // (googlecloudsdk/command_lib/logs/stream.py): OR, parentheses and insertId order.
  auto logs = Gcloud(
      {"ai", "custom-jobs", "stream-logs", id, "--region=europe-west4", "--polling-interval=1"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("workerpool0-0\tEpoch 2/2 loss=0.3 accuracy=0.92"), std::string::npos)
      << logs.out << logs.err;
  EXPECT_NE(logs.out.find("read 3 lines from gs://my-bucket/data/train.csv"), std::string::npos)
      << logs.out;
  auto read =
      Gcloud({"logging", "read", "resource.labels.job_id=\"" + id + "\" AND textPayload:Epoch",
              "--limit=1", "--format=value(textPayload)"});
  EXPECT_EQ(read.out, "Epoch 2/2 loss=0.3 accuracy=0.92\n") << read.err;
  auto cat = Gcloud({"storage", "cat", "gs://my-bucket/model/metrics.json"});
  EXPECT_EQ(cat.out, "{\"accuracy\": 0.92}\n") << cat.err;
  auto rm = Gcloud({"storage", "rm", "gs://my-bucket/data/test.csv"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "buckets" / "my-bucket" / "data" / "test.csv"));
}

// Vertex's Python-package flow with gcloud: a source archive copied with `gcloud storage cp` and
// named by --python-package-uris is pip-installed before `python -m MODULE` runs (here by the
// host's Debian python, which the test's image catalog maps the executor image to).
TEST_F(GcloudE2ETest, PythonPackageArchiveThroughGcloud) {
  auto has_pip = testing::RunProcess(
      {"/usr/bin/python3", "-c",
       "import importlib.util as u, sys\n"
       "sys.exit(not all(u.find_spec(m) for m in ('pip', 'setuptools', 'wheel')))"});
  if (has_pip.exit_code != 0) {
    GTEST_SKIP() << "/usr/bin/python3 has no pip, setuptools or wheel (apt-get install "
                    "python3-pip)";
  }
  const std::filesystem::path src = dir_ / "sdist" / "trainer-0.1";
  testing::WriteFileOrDie(src / "setup.py",
                          "from setuptools import setup, find_packages\n"
                          "setup(name='trainer', version='0.1', packages=find_packages())\n");
  testing::WriteFileOrDie(src / "trainer" / "__init__.py", "");
  testing::WriteFileOrDie(src / "trainer" / "task.py",
                          "import sys\nprint('task args=%s' % sys.argv[1:])\n");
  auto tar = testing::RunProcess({"tar", "-C", (dir_ / "sdist").string(), "-czf",
                                  (dir_ / "trainer-0.1.tar.gz").string(), "trainer-0.1"});
  ASSERT_EQ(tar.exit_code, 0) << tar.err;
  ASSERT_EQ(Gcloud({"storage", "buckets", "create", "gs://my-bucket"}).exit_code, 0);
  auto cp =
      Gcloud({"storage", "cp", (dir_ / "trainer-0.1.tar.gz").string(), "gs://my-bucket/dist/"});
  ASSERT_EQ(cp.exit_code, 0) << cp.err;

  auto create = Gcloud(
      {"ai", "custom-jobs", "create", "--region=europe-west4", "--display-name=sdist",
       "--python-package-uris=gs://my-bucket/dist/trainer-0.1.tar.gz",
       "--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,executor-image-uri="
       "europe-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest,python-module=trainer.task",
       "--args=--alpha=0.5"});
  ASSERT_EQ(create.exit_code, 0) << create.out << create.err;
  std::smatch m;
  const std::string created = create.out + create.err;
  ASSERT_TRUE(std::regex_search(created, m, std::regex(R"(customJobs/(\d+))"))) << created;
  EXPECT_EQ(WaitDone("custom-jobs", m[1]), "JOB_STATE_SUCCEEDED") << server_->Stderr();
  auto logs = Gcloud(
      {"ai", "custom-jobs", "stream-logs", m[1], "--region=europe-west4", "--polling-interval=1"});
  EXPECT_NE(logs.out.find("Successfully installed trainer-0.1"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("workerpool0-0\ttask args=['--alpha=0.5']"), std::string::npos)
      << logs.out << logs.err;
}

TEST_F(GcloudE2ETest, HpTuningJobThroughGcloud) {
  testing::WriteFileOrDie(
      dir_ / "study.yaml",
      "studySpec:\n  metrics:\n  - metricId: objective\n    goal: MINIMIZE\n  parameters:\n"
      "  - parameterId: x\n    discreteValueSpec:\n      values: [1, 2]\n"
      "  algorithm: GRID_SEARCH\ntrialJobSpec:\n  workerPoolSpecs:\n  - machineSpec:\n"
      "      machineType: n1-standard-4\n    replicaCount: 1\n    containerSpec:\n"
      "      imageUri: local\n      command: [bash, " +
          testing::SourcePath("test/objectives/linear_objective.sh").string() +
          "]\n      args: [--steps=2, --step-seconds=0]\n");
  auto create = Gcloud({"ai", "hp-tuning-jobs", "create", "--region=europe-west4",
                        "--display-name=gcloud-study", "--max-trial-count=2",
                        "--parallel-trial-count=1", "--config=" + (dir_ / "study.yaml").string()});
  ASSERT_EQ(create.exit_code, 0) << create.out << create.err;
  std::smatch m;
  const std::string created = create.out + create.err;
  ASSERT_TRUE(std::regex_search(
      created, m, std::regex(R"((?:hyperparameterTuningJobs/|Hyperparameter tuning job \[)(\d+))")))
      << created;
  EXPECT_EQ(WaitDone("hp-tuning-jobs", m[1]), "JOB_STATE_SUCCEEDED") << server_->Stderr();
  auto describe =
      Gcloud({"ai", "hp-tuning-jobs", "describe", m[1], "--region=europe-west4", "--format=json"});
  json job = json::parse(describe.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << describe.err;
  std::string trials;
  for (const auto& t : job["trials"]) {
    trials += t.value("state", "") + " x=" + t["parameters"][0]["value"].dump() + "; ";
  }
  EXPECT_EQ(trials, "SUCCEEDED x=1.0; SUCCEEDED x=2.0; ");
  auto list = Gcloud(
      {"ai", "hp-tuning-jobs", "list", "--region=europe-west4", "--format=value(displayName)"});
  EXPECT_EQ(list.out, "gcloud-study\n") << list.err;
}

// A 400 names the field in google.rpc.BadRequest, and gcloud prints it under the error; a job
// deleted through the REST API leaves an operation gcloud's `ai operations describe` reads.
TEST_F(GcloudE2ETest, FieldViolationsArePrintedAndDeleteOperationsAreDescribed) {
  auto bad = Gcloud({"ai", "custom-jobs", "create", "--region=europe-west4", "--display-name=bad",
                     "--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,"
                     "container-image-uri=local"});
  EXPECT_EQ(std::to_string(bad.exit_code) + " " +
                std::to_string(bad.err.find("'@type': type.googleapis.com/google.rpc.BadRequest") !=
                               std::string::npos) +
                " " +
                std::to_string(bad.err.find("field: jobSpec.workerPoolSpecs[0].containerSpec."
                                            "command") != std::string::npos),
            "1 1 1")
      << bad.err;
  auto job = Gcloud({"ai", "custom-jobs", "create", "--region=europe-west4", "--display-name=gone",
                     "--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,"
                     "container-image-uri=eu.gcr.io/p/pt_bert_sentiment:dev",
                     "--format=value(name)"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  const std::string name = job.out.substr(0, job.out.find('\n'));
  // The trainer fails without its --job-dir; any end will do: only an ended job can be deleted.
  const std::string state = WaitDone("custom-jobs", name.substr(name.rfind('/') + 1));
  ASSERT_TRUE(state == "JOB_STATE_FAILED" || state == "JOB_STATE_SUCCEEDED") << state;
  auto deleted =
      testing::RunProcess({"curl", "-sf", "-X", "DELETE", server_->endpoint() + "/v1/" + name});
  json op = json::parse(deleted.out, nullptr, false);
  ASSERT_TRUE(op.is_object()) << deleted.out;
  const std::string op_name = op.value("name", "");
  auto described = Gcloud({"ai", "operations", "describe", op_name.substr(op_name.rfind('/') + 1),
                           "--region=europe-west4", "--format=value(done)"});
  EXPECT_EQ(described.out, "True\n") << described.err;
}

TEST_F(GcloudE2ETest, AiModelsOnAModelATrainingPipelineRegistered) {
  const json body = {
      {"displayName", "gc-pipeline"},
      {"trainingTaskDefinition",
       "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"},
      {"trainingTaskInputs",
       {{"workerPoolSpecs",
         {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
           {"replicaCount", 1},
           {"containerSpec",
            {{"imageUri", "local"},
             {"command",
              {"sh", "-c",
               "d=\"$TRAINYARD_BUCKET_ROOT/${AIP_MODEL_DIR#gs://}\"; mkdir -p \"$d\" && "
               "echo '{}' > \"$d/config.json\""}}}}}}}}},
      {"modelToUpload", {{"displayName", "gc-model"}, {"containerSpec", {{"imageUri", "img"}}}}}};
  HttpResult created =
      Http(server_->port(), "POST",
           "/v1/projects/my-project/locations/europe-west4/trainingPipelines", body.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  json pipeline;
  for (int i = 0; i < 300; ++i) {
    pipeline = Http(server_->port(), "GET", "/v1/" + created.body.value("name", "")).body;
    if (pipeline.value("state", "") == "PIPELINE_STATE_SUCCEEDED") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string model = pipeline["modelToUpload"].value("name", "");
  ASSERT_FALSE(model.empty()) << pipeline << server_->Stderr();
  const std::string id = model.substr(model.rfind('/') + 1);
  const std::string dir =
      "gs://trainyard-staging/aiplatform-custom-training-" +
      created.body.value("name", "").substr(created.body.value("name", "").rfind('/') + 1) +
      "/model/";
  const std::string region = "--region=europe-west4";
  auto list = Gcloud({"ai", "models", "list", region});
  auto describe = Gcloud({"ai", "models", "describe", id, region,
                          "--format=value(displayName,artifactUri,versionId)"});
  auto upload =
      Gcloud({"ai", "models", "upload", region, "--display-name=gc-v2", "--artifact-uri=" + dir,
              "--container-image-uri=img", "--parent-model=" + model});
  auto refused =
      Gcloud({"ai", "models", "upload", region, "--display-name=none",
              "--artifact-uri=gs://trainyard-staging/nothing/", "--container-image-uri=img"});
  auto versions = Gcloud({"ai", "models", "list-version", id, region});
  auto drop = Gcloud({"ai", "models", "delete-version", id + "@2", region});
  auto remove = Gcloud({"ai", "models", "delete", id, region});
  auto empty = Gcloud({"ai", "models", "list", region});
  EXPECT_EQ(list.out + " | " + describe.out + " | " + std::to_string(upload.exit_code) + " " +
                std::to_string(refused.exit_code) + " " +
                std::to_string(refused.err.find("does not contain a model") != std::string::npos) +
                " | " + std::regex_replace(versions.out, std::regex(" +"), " ") + " | " +
                std::to_string(drop.exit_code) + std::to_string(remove.exit_code) + " | " +
                std::to_string(empty.err.find("Listed 0 items.") != std::string::npos),
            "MODEL_ID" + std::string(id.size() - 6, ' ') + "DISPLAY_NAME\n" + id + "  gc-model\n" +
                " | gc-model\t" + dir + "\t1\n | 0 1 1 | MODEL_ID VERSION_ID DISPLAY_NAME\n" + id +
                " 1 gc-model\n" + id + " 2 gc-v2\n | 00 | 1")
      << list.err << describe.err << upload.err << refused.err << versions.err << drop.err
      << remove.err << empty.err;
}

}  // namespace
}  // namespace trainyard::e2e
