// End-to-end tests of `trainyard-bert predict` on a model exported by `trainyard-bert train`.
#include <gtest/gtest.h>
#include <unistd.h>

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
    // MakeTestDir() names the directory after the running test, which a suite set-up lacks.
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("trainyard_predict_cli_test." + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\nmovie\nthe\n";
    WriteFileOrDie(*dir_ / "vocab.txt", vocab);
    std::string csv = "bodyText,Target\n";
    for (int i = 0; i < 64; ++i) csv += i % 2 ? "good movie,1\n" : "the bad movie,0\n";
    WriteFileOrDie(*dir_ / "train.csv", csv);
    WriteFileOrDie(*dir_ / "labels.json", R"(["negative","positive"])");
    auto r = RunProcess(
        {ToolPath("trainyard-bert"), "train", "--training-file", (*dir_ / "train.csv").string(),
         "--validation-file", (*dir_ / "train.csv").string(), "--vocab",
         (*dir_ / "vocab.txt").string(), "--job-dir", (*dir_ / "model").string(), "--epochs", "10",
         "--batch-size", "8", "--learning-rate", "5e-4", "--threads", "1"},
        "", {"CLOUD_ML_HP_METRIC_FILE=" + (*dir_ / "hp").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { fs::remove_all(*dir_); }
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
  auto r =
      RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir", (*dir_ / "model").string(),
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
  auto a = Lines(txt.out), b = Lines(csv.out);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  // Batch 1 vs batch 64 pads differently: equal up to float rounding.
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a[i]["text"], b[i]["text"]);
    EXPECT_EQ(a[i]["label"], b[i]["label"]);
    for (size_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(a[i]["probabilities"][c].get<double>(), b[i]["probabilities"][c].get<double>(),
                  1e-5);
    }
  }
}

// Two threads split the encoder's GEMMs over the compute pool (model/parallel_linear.h) once a
// batch has >= 64 token rows; the result must not depend on it.
TEST_F(PredictCliTest, ThreadCountsAgree) {
  std::string texts;
  for (int i = 0; i < 100; ++i) texts += i % 3 ? "good movie the good\n" : "the bad bad movie\n";
  WriteFileOrDie(*dir_ / "many.txt", texts);
  std::vector<std::vector<nlohmann::json>> runs;
  for (const char* threads : {"1", "2"}) {
    auto r = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir",
                         (*dir_ / "model").string(), "--input-file", (*dir_ / "many.txt").string(),
                         "--batch-size", "50", "--threads", threads});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    runs.push_back(Lines(r.out));
    ASSERT_EQ(runs.back().size(), 100u) << r.out;
  }
  for (size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(runs[0][i]["label"], runs[1][i]["label"]);
    for (size_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(runs[0][i]["probabilities"][c].get<double>(),
                  runs[1][i]["probabilities"][c].get<double>(), 1e-6);
    }
  }
  auto bad = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir",
                         (*dir_ / "model").string(), "--text", "good", "--threads", "-1"});
  EXPECT_EQ(bad.exit_code, 64);
  EXPECT_NE(bad.err.find("--threads: must be >= 0"), std::string::npos) << bad.err;
}

TEST_F(PredictCliTest, BadInputsAreClearErrors) {
  WriteFileOrDie(*dir_ / "in.csv", "id,review\n1,good movie\n");
  auto r = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir",
                       (*dir_ / "model").string(), "--input-file", (*dir_ / "in.csv").string()});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("no column 'bodyText' (columns: id, review); pass --text-column"),
            std::string::npos)
      << r.err;
  r = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir", (*dir_ / "nope").string(),
                  "--text", "x"});
  EXPECT_EQ(r.exit_code, 66);  // EX_NOINPUT: no such --model-dir
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
  r = RunProcess(
      {ToolPath("trainyard-bert"), "predict", "--model-dir", (*dir_ / "model").string()});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("pass either --text"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainyard
