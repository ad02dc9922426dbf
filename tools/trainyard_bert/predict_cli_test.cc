// End-to-end tests of `trainyard-bert predict` on a model exported by `trainyard-bert train`.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/test_util.h"

namespace trainyard {
namespace {
namespace fs = std::filesystem;
using testing::RunProcess;
using testing::ToolPath;
using testing::WriteFileOrDie;

class PredictCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(testing::MakeTestDir());
    std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\nmovie\nthe\n";
    WriteFileOrDie(*dir_ / "vocab.txt", vocab);
    std::string csv = "bodyText,Target\n";
    for (int i = 0; i < 32; ++i) csv += i % 2 ? "good movie,1\n" : "the bad movie,0\n";
    WriteFileOrDie(*dir_ / "train.csv", csv);
    WriteFileOrDie(*dir_ / "labels.json", R"(["negative","positive"])");
    auto r = RunProcess({ToolPath("trainyard-bert"), "train", "--training-file",
                         (*dir_ / "train.csv").string(), "--validation-file",
                         (*dir_ / "train.csv").string(), "--vocab", (*dir_ / "vocab.txt").string(),
                         "--job-dir", (*dir_ / "model").string(), "--epochs", "3", "--batch-size",
                         "8", "--learning-rate", "3e-3", "--threads", "1"},
                        "", {"CLOUD_ML_HP_METRIC_FILE=" + (*dir_ / "hp").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static fs::path* dir_;
};
fs::path* PredictCliTest::dir_ = nullptr;

std::vector<nlohmann::json> Lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST_F(PredictCliTest, TextsGiveJsonLinesInInputOrder) {
  auto r = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir", (*dir_ / "model").string(),
                       "--text", "good movie", "--text", "the bad movie", "--text", "good"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["text"], "good movie");
  EXPECT_EQ(lines[0]["label"], "positive");
  EXPECT_EQ(lines[1]["label"], "negative");
  EXPECT_EQ(lines[2]["text"], "good");
  double sum = 0;
  for (double p : lines[1]["probabilities"]) sum += p;
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_EQ(lines[1]["probabilities"].size(), 2u);
}

TEST_F(PredictCliTest, CsvAndTxtInputsAgree) {
  WriteFileOrDie(*dir_ / "in.txt", "good movie\nthe bad movie\n");
  WriteFileOrDie(*dir_ / "in.csv", "id,review\n1,good movie\n2,the bad movie\n");
  auto txt = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir",
                         (*dir_ / "model").string(), "--input-file", (*dir_ / "in.txt").string()});
  auto csv = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir",
                         (*dir_ / "model").string(), "--input-file", (*dir_ / "in.csv").string(),
                         "--text-column", "review", "--batch-size", "1"});
  ASSERT_EQ(txt.exit_code, 0) << txt.err;
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(Lines(txt.out).size(), 2u);
  EXPECT_EQ(txt.out, csv.out);
}

TEST_F(PredictCliTest, BadInputsAreClearErrors) {
  WriteFileOrDie(*dir_ / "in.csv", "id,review\n1,good movie\n");
  auto r = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir",
                       (*dir_ / "model").string(), "--input-file", (*dir_ / "in.csv").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no column 'bodyText' (columns: id, review); pass --text-column"),
            std::string::npos)
      << r.err;
  r = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir", (*dir_ / "nope").string(),
                  "--text", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
  r = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir", (*dir_ / "model").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("pass either --text"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainyard
