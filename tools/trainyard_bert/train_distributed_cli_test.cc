// End-to-end tests of data-parallel `trainyard-bert train`: real processes rendezvous over
// 127.0.0.1 with the variables the platform injects (MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK)
// and all-reduce their gradients with c10d/Gloo.
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "testing/sentiment_data.h"
#include "testing/test_util.h"

namespace trainyard {
namespace {
namespace fs = std::filesystem;
using testing::BackgroundProcess;
using testing::ReadFileOrDie;
using testing::RunProcess;
using testing::ToolPath;
using testing::WriteFileOrDie;

// model.safetensors -> name -> float32 values (the export writes F32 only).
std::map<std::string, std::vector<float>> ReadSafetensors(const fs::path& path) {
  const std::string bytes = ReadFileOrDie(path);
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  const auto header = nlohmann::json::parse(bytes.substr(8, header_size));
  std::map<std::string, std::vector<float>> tensors;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    EXPECT_EQ(info["dtype"], "F32") << name;
    const size_t begin = info["data_offsets"][0], end = info["data_offsets"][1];
    std::vector<float> values((end - begin) / 4);
    std::memcpy(values.data(), bytes.data() + 8 + header_size + begin, end - begin);
    tensors[name] = std::move(values);
  }
  return tensors;
}

// metrics.json without the wall times, which differ between runs.
std::string MetricsWithoutTimes(const fs::path& path) {
  return std::regex_replace(ReadFileOrDie(path), std::regex(R"("seconds": [0-9.e+-]+)"),
                            "\"seconds\": 0");
}

class TrainDistributedCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    WriteFileOrDie(dir_ / "vocab.txt", testing::SentimentVocab());
    WriteFileOrDie(dir_ / "train.csv", testing::SentimentCsv(800, 1));
    WriteFileOrDie(dir_ / "eval.csv", testing::SentimentCsv(48, 2));
    WriteFileOrDie(dir_ / "test.csv", testing::SentimentCsv(48, 3));
    WriteFileOrDie(dir_ / "labels.json", R"({"id2label": {"0": "negative", "1": "positive"}})");
  }

  std::vector<std::string> Args(const std::string& job, int batch, int epochs,
                                const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {ToolPath("trainyard-bert"),
                                     "train",
                                     "--training-file",
                                     (dir_ / "train.csv").string(),
                                     "--validation-file",
                                     (dir_ / "eval.csv").string(),
                                     "--testing-file",
                                     (dir_ / "test.csv").string(),
                                     "--vocab",
                                     (dir_ / "vocab.txt").string(),
                                     "--job-dir",
                                     (dir_ / job).string(),
                                     "--epochs",
                                     std::to_string(epochs),
                                     "--batch-size",
                                     std::to_string(batch),
                                     "--learning-rate",
                                     "1e-3",
                                     "--max-length",
                                     "32",
                                     "--threads",
                                     "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // Starts `world` ranks of the same command (rank r's output in <name>.<r>.out/.err).
  std::vector<BackgroundProcess> StartRanks(const std::string& name,
                                            const std::vector<std::string>& args, int world,
                                            const std::vector<std::string>& extra_env = {}) {
    const int port = testing::FreeTcpPort();
    std::vector<BackgroundProcess> ranks;
    for (int r = 0; r < world; ++r) {
      std::vector<std::string> env = {
          "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
          "WORLD_SIZE=" + std::to_string(world), "RANK=" + std::to_string(r),
          "CLOUD_ML_HP_METRIC_FILE=" + (dir_ / "hp.metrics").string()};
      env.insert(env.end(), extra_env.begin(), extra_env.end());
      const std::string base = name + "." + std::to_string(r);
      ranks.push_back(
          testing::StartProcess(args, env, dir_ / (base + ".out"), dir_ / (base + ".err")));
    }
    return ranks;
  }

  // A single process's environment: its hypertune file apart from the gang's.
  std::vector<std::string> SingleEnv() const {
    return {"CLOUD_ML_HP_METRIC_FILE=" + (dir_ / "hp_single.metrics").string()};
  }

  static std::string Output(const BackgroundProcess& p) {
    return ReadFileOrDie(p.out) + "\n--- stderr ---\n" + ReadFileOrDie(p.err);
  }

  fs::path dir_;
};

// The issue's acceptance test: 2 workers x batch 8 end with the same weights as 1 worker x batch
// 16 (same seed, dropout off so both draw no random numbers), and only rank 0 writes.
TEST_F(TrainDistributedCliTest, TwoReplicasMatchOneWorkerWithTheGlobalBatch) {
  // A starting checkpoint with dropout disabled: export one epoch, then edit its config.json.
  auto base = RunProcess(Args("base", 16, 1), "", SingleEnv());
  ASSERT_EQ(base.exit_code, 0) << base.err;
  auto config = nlohmann::json::parse(ReadFileOrDie(dir_ / "base" / "config.json"));
  config["hidden_dropout_prob"] = 0.0;
  config["attention_probs_dropout_prob"] = 0.0;
  config["classifier_dropout"] = 0.0;
  WriteFileOrDie(dir_ / "base" / "config.json", config.dump(2));
  const std::vector<std::string> from_base = {"--model-dir", (dir_ / "base").string()};

  auto one = RunProcess(Args("one", 16, 2, from_base), "", SingleEnv());
  ASSERT_EQ(one.exit_code, 0) << one.err;

  auto ranks = StartRanks("two", Args("two", 8, 2, from_base), 2, {"TRAINYARD_CHECK_REPLICAS=1"});
  const int rc0 = WaitProcess(ranks[0], 300), rc1 = WaitProcess(ranks[1], 300);
  ASSERT_EQ(rc0, 0) << Output(ranks[0]);
  ASSERT_EQ(rc1, 0) << Output(ranks[1]);
  EXPECT_NE(Output(ranks[0]).find("Global batch size: 8 per replica x 2 replicas = 16"),
            std::string::npos)
      << Output(ranks[0]);
  EXPECT_NE(Output(ranks[1]).find("rank 0 exports the model"), std::string::npos)
      << Output(ranks[1]);
  // Each rank trained on half of every global batch: 2 epochs x 800 examples in all.
  EXPECT_NE(Output(ranks[0]).find("Trained 1600 samples"), std::string::npos) << Output(ranks[0]);
  // Only the chief reported to the hypertune file: one line per epoch.
  const std::string hp = ReadFileOrDie(dir_ / "hp.metrics");
  EXPECT_EQ(std::count(hp.begin(), hp.end(), '\n'), 2) << hp;

  auto a = ReadSafetensors(dir_ / "one" / "model.safetensors");
  auto b = ReadSafetensors(dir_ / "two" / "model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  double max_diff = 0, max_change = 0;
  std::string worst;
  auto start = ReadSafetensors(dir_ / "base" / "model.safetensors");
  for (const auto& [name, values] : a) {
    ASSERT_EQ(values.size(), b[name].size()) << name;
    for (size_t i = 0; i < values.size(); ++i) {
      const double d = std::fabs(static_cast<double>(values[i]) - b[name][i]);
      if (d > max_diff) max_diff = d, worst = name;
      max_change = std::max(max_change, std::fabs(static_cast<double>(values[i]) - start[name][i]));
    }
  }
  // 100 AdamW steps at lr 1e-3 moved weights by up to ~0.03; float32 summation order (one mean of
  // 16 vs the mean of two means of 8) leaves differences around 2e-6 (measured).
  EXPECT_GT(max_change, 1e-2);
  EXPECT_LT(max_diff, 2e-5) << "largest difference in " << worst;
  auto metrics = [](const fs::path& p) {
    auto m = nlohmann::json::parse(ReadFileOrDie(p));
    return m["test"]["accuracy"].dump() + " " + m["test"]["confusion_matrix"].dump();
  };
  EXPECT_EQ(metrics(dir_ / "two" / "metrics.json"), metrics(dir_ / "one" / "metrics.json"));
}

// SIGTERM to one replica: both stop after the same step, rank 0 writes the checkpoint, both exit
// 143; rerunning the gang resumes to exactly the uninterrupted run's metrics, and a restart with
// one replica re-shards the rest of the epoch and finishes.
TEST_F(TrainDistributedCliTest, SigtermOnOneReplicaCheckpointsAndResumesAtAnyWorldSize) {
  const std::vector<std::string> ckpt_a = {"--checkpoint-dir", (dir_ / "ckpt_a").string()};
  auto full = StartRanks("full", Args("job_a", 8, 3, ckpt_a), 2);
  ASSERT_EQ(WaitProcess(full[0], 300), 0) << Output(full[0]);
  ASSERT_EQ(WaitProcess(full[1], 300), 0) << Output(full[1]);

  const std::vector<std::string> ckpt_b = {"--checkpoint-dir", (dir_ / "ckpt_b").string()};
  auto ranks = StartRanks("stopped", Args("job_b", 8, 3, ckpt_b), 2);
  // Rank 0's first line of epoch 2: well before the end (150 steps in all).
  ASSERT_TRUE(testing::WaitForText(ranks[0], ranks[0].out, "Epoch   2 |     0/"))
      << Output(ranks[0]);
  ::kill(ranks[1].pid, SIGTERM);
  const int rc0 = WaitProcess(ranks[0], 120), rc1 = WaitProcess(ranks[1], 120);
  ASSERT_EQ(rc1, 143) << Output(ranks[1]);
  ASSERT_EQ(rc0, 143) << Output(ranks[0]);
  EXPECT_NE(Output(ranks[1]).find("rank 0 wrote the checkpoint"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "job_b"));
  fs::copy(dir_ / "ckpt_b", dir_ / "ckpt_c", fs::copy_options::recursive);

  auto resumed = StartRanks("resumed", Args("job_b", 8, 3, ckpt_b), 2);
  ASSERT_EQ(WaitProcess(resumed[0], 300), 0) << Output(resumed[0]);
  ASSERT_EQ(WaitProcess(resumed[1], 300), 0) << Output(resumed[1]);
  EXPECT_NE(Output(resumed[0]).find("Resuming from checkpoint"), std::string::npos);
  EXPECT_EQ(MetricsWithoutTimes(dir_ / "job_b" / "metrics.json"),
            MetricsWithoutTimes(dir_ / "job_a" / "metrics.json"));

  // The same checkpoint, continued by a single process (no MASTER_ADDR etc.).
  auto single = RunProcess(Args("job_c", 8, 3, {"--checkpoint-dir", (dir_ / "ckpt_c").string()}),
                           "", SingleEnv());
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_NE(single.err.find("written by 2 replica(s), this run has 1"), std::string::npos)
      << single.err;
  EXPECT_TRUE(fs::exists(dir_ / "job_c" / "model.safetensors"));
}

// A replica killed without notice: the survivor's next collective fails within the collective
// timeout and it exits non-zero with a message naming the cause, instead of hanging.
TEST_F(TrainDistributedCliTest, KilledPeerEndsTheOtherReplicaWithAClearError) {
  auto ranks = StartRanks("killed", Args("job", 8, 50, {"--collective-timeout", "20"}), 2);
  ASSERT_TRUE(testing::WaitForText(ranks[0], ranks[0].out, "Epoch   1 |     0/"))
      << Output(ranks[0]);
  ::kill(ranks[1].pid, SIGKILL);
  WaitProcess(ranks[1], 30);
  const int rc0 = WaitProcess(ranks[0], 120);
  EXPECT_EQ(rc0, 1) << Output(ranks[0]);
  EXPECT_TRUE(
      std::regex_search(ReadFileOrDie(ranks[0].err), std::regex("rank 0/2: .*(peer|timed out)")))
      << Output(ranks[0]);
}

TEST_F(TrainDistributedCliTest, ContradictingRoleVariablesAreRejected) {
  auto r = RunProcess(Args("job", 8, 1), "",
                      {"MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500", "WORLD_SIZE=2", "RANK=2"});
  EXPECT_EQ(r.exit_code, 64) << r.err;  // EX_USAGE: not restarted
  EXPECT_NE(r.err.find("RANK"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainyard
