// A 2-worker data-parallel BERT job through the real server: worker pools 0 and 1 (one chief,
// one worker, as in the Vertex article's multi-worker example) run `trainyard-bert train` (image
// trainyard/bert-sentiment) as one gang; the replicas find each other through the environment the
// executor injects (MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK, CLUSTER_SPEC, TF_CONFIG), all-reduce
// gradients over Gloo, and the chief exports the model to AIP_MODEL_DIR. Once with the local
// executor, once with `--executor slurm` on a real local Slurm cluster (skipped without one:
// bash scripts/slurm-local.sh start --nodes 2).
#include <gtest/gtest.h>

#include <fstream>

#include "e2e_harness.h"
#include "testing/sentiment_data.h"

namespace trainyard::e2e {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// The checkpoint-NNNNNNNN entries directly in `dir` (none when it does not exist).
std::vector<std::string> CheckpointsIn(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("checkpoint-", 0) == 0) out.push_back(n);
  }
  return out;
}

class DistributedBertE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    bert_ = testing::ToolPath("trainyard-bert");
    if (!HaveLocalExecutor() || !fs::exists(bert_)) {
      GTEST_SKIP() << "needs the local executor and trainyard-bert (a LibTorch build)";
    }
    dir_ = testing::MakeTestDir();
    buckets_ = dir_ / "buckets";
    fs::create_directories(buckets_ / "bkt" / "data");
    testing::WriteFileOrDie(buckets_ / "bkt" / "data" / "train.csv", testing::SentimentCsv(320, 1));
    testing::WriteFileOrDie(buckets_ / "bkt" / "data" / "eval.csv", testing::SentimentCsv(48, 2));
    testing::WriteFileOrDie(buckets_ / "bkt" / "data" / "test.csv", testing::SentimentCsv(48, 3));
    testing::WriteFileOrDie(buckets_ / "bkt" / "data" / "vocab.txt", testing::SentimentVocab());
    env_ = {"TRAINYARD_BUCKET_ROOT=" + buckets_.string(),
            "PATH=" + bert_.parent_path().string() + ":" + std::getenv("PATH")};
  }

  // CustomJob: pool 0 = chief, pool 1 = one worker, both the built-in BERT image.
  static json TwoWorkerJob() {
    json args = json::array(
        {"--training-file=gs://bkt/data/train.csv", "--validation-file=gs://bkt/data/eval.csv",
         "--testing-file=gs://bkt/data/test.csv", "--vocab=gs://bkt/data/vocab.txt", "--epochs=2",
         "--batch-size=8", "--max-length=32", "--threads=1", "--learning-rate=0.001",
         "--check-replicas"});
    json pool = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
                 {"replicaCount", 1},
                 {"containerSpec", {{"imageUri", "trainyard/bert-sentiment"}, {"args", args}}}};
    return {{"displayName", "bert-2-workers"},
            {"jobSpec",
             {{"workerPoolSpecs", json::array({pool, pool})},
              {"baseOutputDirectory", {{"outputUriPrefix", "gs://bkt/out/"}}}}}};
  }

  // Submits the job, waits for it to end, and checks what both replicas logged and exported.
  void RunAndCheck(const std::vector<std::string>& server_args) {
    std::string error;
    auto server = ServerProcess::Start(dir_ / "data", server_args, &error, env_);
    ASSERT_NE(server, nullptr) << error;
    auto created = Http(server->port(), "POST", "/v1/projects/p/locations/us-central1/customJobs",
                        TwoWorkerJob().dump());
    ASSERT_EQ(created.status, 200) << created.body.dump();
    const std::string name = created.body.value("name", "");
    json job = WaitForJob(server->port(), name, {}, 300);
    auto logs = Cli(server->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, env_);
    ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED")
        << job.dump(2) << "\n"
        << logs.out << logs.err << server->Stderr();
    for (const char* line :
         {"Data-parallel replica: rank 0/2", "Data-parallel replica: rank 1/2",
          "Global batch size: 8 per replica x 2 replicas = 16", "rank 0 exports the model"}) {
      EXPECT_NE(logs.out.find(line), std::string::npos) << line << "\n" << logs.out;
    }
    // AIP_MODEL_DIR = <baseOutputDirectory>/model/, written by the chief only.
    const fs::path model = buckets_ / "bkt" / "out" / "model";
    EXPECT_TRUE(fs::exists(model / "model.safetensors")) << logs.out;
    auto metrics = json::parse(testing::ReadFileOrDie(model / "metrics.json"), nullptr, false);
    ASSERT_TRUE(metrics.is_object());
    EXPECT_EQ(metrics["test"].value("examples", 0), 48);
  }

  fs::path bert_, dir_, buckets_;
  std::vector<std::string> env_;
};

// Rank 1 is killed (SIGKILL, no notice) after the first checkpoint: the survivor's collective
// fails, the platform restarts the whole gang (a data-parallel job cannot continue with one member
// replaced), both replicas resume from AIP_CHECKPOINT_DIR and the job succeeds.
TEST_F(DistributedBertE2ETest, KilledReplicaRestartsTheGangFromTheLatestCheckpoint) {
  const fs::path mark = dir_ / "rank1-crashed";
  const std::string script = R"SH(#!/bin/sh
# First attempt of rank 1: train until a checkpoint exists, then die without notice.
if [ "$RANK" = 1 ] && [ ! -f ")SH" +
                             mark.string() + R"SH(" ]; then
  touch ")SH" + mark.string() +
                             R"SH("
  ckpt="${TRAINYARD_BUCKET_ROOT}/${AIP_CHECKPOINT_DIR#gs://}/${CLOUD_ML_JOB_ID}"
  trainyard-bert train "$@" & pid=$!
  until ls "$ckpt"/checkpoint-*/DONE >/dev/null 2>&1; do sleep 0.02; done
  kill -9 $pid
  exit 137
fi
exec trainyard-bert train "$@"
)SH";
  testing::WriteFileOrDie(dir_ / "crashy.sh", script);
  testing::WriteFileOrDie(
      dir_ / "images.yaml",
      "images:\n  - uri: crashy/bert\n    command: [sh, " + (dir_ / "crashy.sh").string() + "]\n");
  json job = TwoWorkerJob();
  for (auto& pool : job["jobSpec"]["workerPoolSpecs"]) {
    pool["containerSpec"]["imageUri"] = "crashy/bert";
    pool["containerSpec"]["args"].push_back("--checkpoint-every-steps=3");
    pool["containerSpec"]["args"].push_back("--collective-timeout=30");
    pool["containerSpec"]["args"][4] = "--epochs=4";
  }
  std::string error;
  auto server =
      ServerProcess::Start(dir_ / "data",
                           {"--executor", "local", "--gpus", "0", "--cpus", "64", "--memory-gib",
                            "256", "--image-catalog", (dir_ / "images.yaml").string()},
                           &error, env_);
  ASSERT_NE(server, nullptr) << error;
  auto created =
      Http(server->port(), "POST", "/v1/projects/p/locations/us-central1/customJobs", job.dump());
  ASSERT_EQ(created.status, 200) << created.body.dump();
  const std::string name = created.body.value("name", "");
  json done = WaitForJob(server->port(), name, {}, 300);
  auto logs = Cli(server->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, env_);
  ASSERT_EQ(done.value("state", ""), "JOB_STATE_SUCCEEDED")
      << done.dump(2) << "\n"
      << logs.out << logs.err << server->Stderr();
  EXPECT_TRUE(fs::exists(mark));
  for (const char* line :
       {"exited with code 137", "restarting the whole job", "Resuming from checkpoint"}) {
    EXPECT_NE(logs.out.find(line), std::string::npos) << line << "\n" << logs.out;
  }
  EXPECT_TRUE(fs::exists(buckets_ / "bkt" / "out" / "model" / "model.safetensors")) << logs.out;
  // The job's checkpoints are its own: <AIP_CHECKPOINT_DIR>/<job id>/.
  const std::string job_id = name.substr(name.rfind('/') + 1);
  EXPECT_FALSE(CheckpointsIn(buckets_ / "bkt" / "out" / "checkpoints" / job_id).empty());
  EXPECT_TRUE(CheckpointsIn(buckets_ / "bkt" / "out" / "checkpoints").empty());
}

TEST_F(DistributedBertE2ETest, LocalExecutorRunsTwoWorkerPoolsAsOneDataParallelGang) {
  RunAndCheck({"--executor", "local", "--gpus", "0", "--cpus", "64", "--memory-gib", "256"});
}

TEST_F(DistributedBertE2ETest, SlurmExecutorRunsTwoWorkerPoolsAsOneDataParallelGang) {
  if (std::string why = SlurmSkipReason(); !why.empty()) GTEST_SKIP() << why;
  RunAndCheck({"--executor", "slurm"});
}

}  // namespace
}  // namespace trainyard::e2e
