// The article's job.sh, with `gcloud ai` replaced by `trainyard ai` and the
// <your-...> placeholders filled in, run unchanged by bash against a local server. The image it
// names, eu.gcr.io/$PROJECT_ID/pt_bert_sentiment:dev, is mapped by an image catalog to a small
// shell trainer that behaves like the article's main.py at the file level: it reads the gs:// CSVs
// and writes the model to --job-dir.
#include <gtest/gtest.h>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;

constexpr const char* kJobSh = R"(# job.sh

export PROJECT_ID=my-project
export BUCKET=my-bucket
export REGION="europe-west4"
export SERVICE_ACCOUNT=trainer@my-project.iam.gserviceaccount.com
export JOB_NAME="pytorch_bert_training"
export MACHINE_TYPE="n1-standard-4"  # Тут можно описать необходимые GPU
export ACCELERATOR_TYPE="NVIDIA_TESLA_T4"
export IMAGE_URI="eu.gcr.io/$PROJECT_ID/pt_bert_sentiment:dev"


trainyard ai custom-jobs create \
--region=$REGION \
--display-name=$JOB_NAME \
--worker-pool-spec=machine-type=$MACHINE_TYPE,accelerator-type=$ACCELERATOR_TYPE,accelerator-count=1,replica-count=1,container-image-uri=$IMAGE_URI \
--service-account=$SERVICE_ACCOUNT \
--args=\
--training-file=gs://$BUCKET/data/train.csv,\
--validation-file=gs://$BUCKET/data/eval.csv,\
--testing-file=gs://$BUCKET/data/test.csv,\
--job-dir=gs://$BUCKET/model/model.pt,\
--epochs=10,\
--batch-size=128,\
--learning-rate=0.0001
)";

// Stands in for the article's trainer image until `trainyard-bert train` is mapped to it.
constexpr const char* kFakeTrainer = R"SH(#!/bin/sh
set -e
echo "args: $*"
for a in "$@"; do
  case "$a" in
    --training-file=gs://*|--validation-file=gs://*|--testing-file=gs://*)
      f="${TRAINYARD_BUCKET_ROOT}/${a#*=gs://}"
      test -f "$f" || { echo "missing $f" >&2; exit 2; }
      echo "read $(wc -l < "$f") lines from ${a#*=}";;
    --job-dir=gs://*) out="${TRAINYARD_BUCKET_ROOT}/${a#*=gs://}";;
  esac
done
echo "Epoch 1/10 accuracy=0.94"
mkdir -p "$(dirname "$out")" && echo model > "$out"
)SH";

TEST(JobShE2ETest, ArticleJobShRunsUnchanged) {
  auto dir = testing::MakeTestDir();
  auto buckets = dir / "buckets";
  testing::WriteFileOrDie(dir / "fake_trainer.sh", kFakeTrainer);
  testing::WriteFileOrDie(dir / "images.yaml",
                          "images:\n  - uri: eu.gcr.io/*/pt_bert_sentiment:*\n    command: [sh, " +
                              (dir / "fake_trainer.sh").string() + "]\n");
  testing::WriteFileOrDie(dir / "job.sh", kJobSh);
  std::vector<std::string> env = {"TRAINYARD_BUCKET_ROOT=" + buckets.string()};
  std::vector<std::string> args = {"--image-catalog", (dir / "images.yaml").string()};
  if (HaveLocalExecutor()) {
    // The article asks for a T4; tell the local executor this host has one GPU.
    args.insert(args.end(), {"--executor", "local", "--gpus", "1"});
  } else {
    args.insert(args.end(), {"--executor", "fake", "--fake-run-ms", "200"});
  }
  std::string error;
  auto server = ServerProcess::Start(dir / "data", args, &error, env);
  ASSERT_NE(server, nullptr) << error;
  env.push_back("TRAINYARD_ENDPOINT=" + server->endpoint());

  // Upload the data as the article does with make_splits --output-dir gs://bucket/data, into a
  // bucket made first (as on Cloud Storage: nothing makes one implicitly).
  auto bucket = Cli(server->endpoint(), {"storage", "buckets", "create", "gs://my-bucket"}, env);
  ASSERT_EQ(bucket.exit_code, 0) << bucket.err;
  for (const char* split : {"train", "eval", "test"}) {
    testing::WriteFileOrDie(dir / (std::string(split) + ".csv"), "text,label\ngood,2\nbad,0\n");
    auto cp = Cli(
        server->endpoint(),
        {"storage", "cp", (dir / (std::string(split) + ".csv")).string(), "gs://my-bucket/data/"},
        env);
    ASSERT_EQ(cp.exit_code, 0) << cp.err;
  }

  std::string path = testing::ToolPath("trainyard").parent_path().string() + ":" +
                     std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  env.push_back("PATH=" + path);
  auto run = testing::RunProcess({"bash", (dir / "job.sh").string()}, "", env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  size_t open = run.err.find("CustomJob [");
  ASSERT_NE(open, std::string::npos) << run.err;
  std::string name = run.err.substr(open + 11, run.err.find(']', open) - open - 11);

  auto logs = Cli(server->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, env);
  auto describe =
      Cli(server->endpoint(), {"ai", "custom-jobs", "describe", name, "--format=json"}, env);
  json job = json::parse(describe.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << describe.err;
  const json& pool = job["jobSpec"]["workerPoolSpecs"][0];
  EXPECT_EQ(
      job.value("state", "") + " " + job.value("displayName", "") + " " +
          name.substr(0, name.rfind('/')) + " " + pool["machineSpec"].dump() + " " +
          job["jobSpec"].value("serviceAccount", "") + " " + pool["containerSpec"]["args"].dump(),
      "JOB_STATE_SUCCEEDED pytorch_bert_training "
      "projects/local/locations/europe-west4/customJobs "
      R"({"acceleratorCount":1,"acceleratorType":"NVIDIA_TESLA_T4","machineType":"n1-standard-4"} )"
      "trainer@my-project.iam.gserviceaccount.com "
      R"(["--training-file=gs://my-bucket/data/train.csv","--validation-file=gs://my-bucket/data/eval.csv",)"
      R"("--testing-file=gs://my-bucket/data/test.csv","--job-dir=gs://my-bucket/model/model.pt",)"
      R"("--epochs=10","--batch-size=128","--learning-rate=0.0001"])")
      << logs.out << logs.err << server->Stderr();
  EXPECT_EQ(logs.exit_code, 0) << logs.out << logs.err;
  if (HaveLocalExecutor()) {
    // The article's price: n1-standard-4 $0.24/h + T4 $0.40/h.
    EXPECT_NEAR(job["trainyardInfo"].value("hourlyCostUsd", 0.0), 0.64, 1e-9);
    EXPECT_NE(logs.out.find("Epoch 1/10 accuracy=0.94"), std::string::npos) << logs.out;
    auto model =
        Cli(server->endpoint(),
            {"storage", "cp", "gs://my-bucket/model/model.pt", (dir / "model.pt").string()}, env);
    EXPECT_EQ(model.exit_code, 0) << model.err;
  }
}

}  // namespace
}  // namespace trainyard::e2e
