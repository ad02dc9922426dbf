// `trainyard automl text-classification` end to end: make-splits, a tuning job over the real
// trainer (image trainyard/bert-sentiment = trainyard-bert train) on the real server, and the
// best model exported. Slow-ish (two 1-epoch BERT-Tiny trials on 160 rows).
#include <gtest/gtest.h>

#include <fstream>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

TEST(HpTuningAutomlE2ETest, TunesTheTrainerAndExportsTheBestModel) {
  const auto bert = testing::ToolPath("trainyard-bert");
  const auto vocab = testing::SourcePath("data/sample/vocab.txt");
  if (!HaveLocalExecutor() || !std::filesystem::exists(bert) || !std::filesystem::exists(vocab)) {
    GTEST_SKIP() << "needs the local executor, trainyard-bert and data/sample/vocab.txt "
                    "(scripts/fetch-sample-data.sh)";
  }
  const auto dir = testing::MakeTestDir();
  {
    std::ofstream csv(dir / "reviews.csv");
    csv << "text,label\n";
    const char* good[] = {"great", "excellent", "good", "wonderful"};
    const char* bad[] = {"bad", "awful", "terrible", "poor"};
    for (int i = 0; i < 80; ++i) {
      csv << "\"this is " << good[i % 4] << " and " << good[(i + 1) % 4] << "\",pos\n";
      csv << "\"this is " << bad[i % 4] << " and " << bad[(i + 1) % 4] << "\",neg\n";
    }
  }
  const std::vector<std::string> env = {
      "TRAINYARD_BUCKET_ROOT=" + (dir / "buckets").string(),
      "PATH=" + bert.parent_path().string() + ":" + std::getenv("PATH"),
      "TRAINYARD_BERT=" + bert.string()};
  std::string error;
  auto server = ServerProcess::Start(
      dir / "data", {"--executor", "local", "--gpus", "0", "--cpus", "64", "--memory-gib", "256"},
      &error, env);
  ASSERT_NE(server, nullptr) << error;

  auto r = Cli(
      server->endpoint(),
      {"automl", "text-classification", "--training-data=" + (dir / "reviews.csv").string(),
       "--target-column=label", "--text-column=text", "--budget-trials=2", "--parallel-trials=2",
       "--max-epochs=1", "--vocab=" + vocab.string(), "--trainer-arg=--threads=1",
       "--poll-seconds=0.5", "--output=" + (dir / "best").string()},
      env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << server->Stderr();
  EXPECT_NE(r.out.find("best trial: "), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "best" / "config.json") &&
              std::filesystem::exists(dir / "best" / "model.safetensors"))
      << r.out << r.err;
}

}  // namespace
}  // namespace trainyard::e2e
