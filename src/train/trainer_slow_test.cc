// Trainer properties that need real training steps: the loss goes down on the UCI sample, and a
// run stopped (as by SIGTERM) and resumed ends bit-identical to an uninterrupted one.
#include <gtest/gtest.h>

#include "train/trainer.h"
#include "train/trainer_test_util.h"

namespace trainyard::train {
namespace {
namespace fs = std::filesystem;
using testing_util::BaseOptions;
using testing_util::CapturedRun;

TEST(TrainerSlowTest, LossDecreasesOnSampleData) {
  const fs::path csv = trainyard::testing::SourcePath("data/sample/uci_sentiment.csv");
  const fs::path vocab = trainyard::testing::SourcePath("data/sample/vocab.txt");
  ASSERT_TRUE(fs::exists(csv) && fs::exists(vocab)) << "run scripts/fetch-sample-data.sh first";
  const fs::path dir = trainyard::testing::MakeTestDir();
  const replica_contract::EnvMap env = {{"CLOUD_ML_HP_METRIC_FILE", (dir / "hp").string()}};
  // The first 480 rows (amazon) as training data, the next 96 for validation, renamed columns.
  std::ifstream in(csv);
  std::string line, train = "bodyText,Target,source\n", valid = train;
  std::getline(in, line);
  for (int i = 0; i < 576 && std::getline(in, line); ++i) (i < 480 ? train : valid) += line + "\n";
  trainyard::testing::WriteFileOrDie(dir / "train.csv", train);
  trainyard::testing::WriteFileOrDie(dir / "eval.csv", valid);
  TrainOptions o;
  o.training_file = dir / "train.csv";
  o.validation_file = dir / "eval.csv";
  o.vocab = vocab;
  o.epochs = 3;
  o.batch_size = 32;
  o.learning_rate = 1e-3;
  o.max_length = 48;
  o.threads = 1;
  CapturedRun run(env);
  auto r = run.Run(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto history = nlohmann::json::parse(run.out.str().empty() ? "[]" : "[]");
  // Mean training loss per epoch, from the end-of-epoch lines.
  std::vector<double> losses;
  std::istringstream out(run.out.str());
  while (std::getline(out, line)) {
    auto at = line.find("- loss: ");
    if (line.rfind("End of epoch", 0) == 0 && at != std::string::npos)
      losses.push_back(std::stod(line.substr(at + 8)));
  }
  ASSERT_EQ(losses.size(), 3u) << run.out.str();
  EXPECT_LT(losses[2], losses[0] - 0.02) << run.out.str();
}

std::string FinalMetrics(const TrainResult& r) {
  nlohmann::json j = {{"train_loss", r.train_loss},
                      {"train_accuracy", r.train_accuracy},
                      {"validation", MetricsToJson(*r.validation)},
                      {"test", MetricsToJson(*r.test)},
                      {"global_step", r.global_step}};
  return j.dump();
}

TEST(TrainerSlowTest, StopAndResumeIsBitIdenticalToUninterrupted) {
  const fs::path dir = trainyard::testing::MakeTestDir();
  const replica_contract::EnvMap env = {{"CLOUD_ML_HP_METRIC_FILE", (dir / "hp").string()}};
  auto splits = testing_util::WriteSyntheticSplits(dir, 160);
  TrainOptions o = BaseOptions(splits);
  o.epochs = 2;  // 10 steps an epoch
  o.checkpoint_every_steps = 4;

  o.checkpoint_dir = dir / "ckpt_a";
  o.job_dir = dir / "job_a";
  CapturedRun uninterrupted(env);
  auto a = uninterrupted.Run(o);
  ASSERT_TRUE(a.ok()) << a.status();

  // Stop requested after step 7 (mid-epoch, between periodic checkpoints), then after step 13.
  o.checkpoint_dir = dir / "ckpt_b";
  o.job_dir = dir / "job_b";
  for (int64_t stop_at : {7, 13}) {
    std::atomic<bool> stop{false};
    CapturedRun interrupted(env);
    auto b = interrupted.Run(o, &stop, [&](int64_t step) {
      if (step == stop_at) stop = true;
    });
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_EQ(b->outcome, TrainOutcome::kPreempted);
    ASSERT_EQ(b->global_step, stop_at);
  }
  CapturedRun resumed(env);
  auto c = resumed.Run(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->resumed);
  EXPECT_NE(resumed.log.str().find("Resuming from checkpoint " + (dir / "ckpt_b").string() +
                                   "/checkpoint-00000013 (epoch 2, batch 3/10, global step 13)"),
            std::string::npos)
      << resumed.log.str();
  EXPECT_EQ(FinalMetrics(*c), FinalMetrics(*a));
}

}  // namespace
}  // namespace trainyard::train
