// End-to-end tests of `trainyard-bert make-splits`: the built binary on the sample data, on the
// article's schema and on bad inputs (each must fail with file:line and leave no output).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "testing/test_util.h"

namespace trainyard {
namespace {
namespace fs = std::filesystem;
using testing::MakeTestDir;
using testing::ProcessResult;
using testing::ReadFileOrDie;
using testing::RunProcess;
using testing::SourcePath;
using testing::ToolPath;

ProcessResult MakeSplits(std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.begin(), {ToolPath("trainyard-bert").string(), "make-splits"});
  return RunProcess(args, "", env);
}

std::string Fixture(const std::string& name) {
  return SourcePath("test/fixtures/csv/" + name).string();
}

size_t CountLines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

TEST(MakeSplitsCliTest, SampleDataGivesStratifiedSplitsAndArticleShapes) {
  const fs::path sample = SourcePath("data/sample/uci_sentiment.csv");
  ASSERT_TRUE(fs::exists(sample)) << "run `bash scripts/fetch-sample-data.sh` first";
  const fs::path out = MakeTestDir() / "splits";
  auto r = MakeSplits({"--output-dir", out.string(), "--text-column", "text", "--label-column",
                       "label", sample.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // One text per line in the sample, so line counts are row counts (+1 header).
  EXPECT_EQ(r.out.substr(r.out.find("Train :")) +
                std::to_string(CountLines(ReadFileOrDie(out / "train.csv"))) + " " +
                std::to_string(CountLines(ReadFileOrDie(out / "test.csv"))),
            "Train : ((2400, 4)) samples\n"
            "Val : ((300, 4)) samples\n"
            "Test : ((300, 4)) samples\n"
            "Target  label  train/eval/test\n"
            "     0  0      1200/150/150\n"
            "     1  1      1200/150/150\n"
            "2401 301");
}

TEST(MakeSplitsCliTest, SameSeedGivesIdenticalFiles) {
  const fs::path dir = MakeTestDir();
  std::string files[2];
  for (int i = 0; i < 2; ++i) {
    const fs::path out = dir / ("run" + std::to_string(i));
    auto r = MakeSplits({"--output-dir", out.string(), "--seed", "5", "--text-column", "text",
                         "--label-column", "label", Fixture("labels.csv")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* f : {"train.csv", "eval.csv", "test.csv", "labels.json"}) {
      files[i] += ReadFileOrDie(out / f);
    }
  }
  EXPECT_EQ(files[0], files[1]);
}

TEST(MakeSplitsCliTest, ArticleSchemaWithBomCrlfAndDroppedRows) {
  const fs::path out = MakeTestDir() / "splits";
  auto r = MakeSplits({"--output-dir", out.string(), Fixture("article_sentiment.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string all = ReadFileOrDie(out / "train.csv");
  const std::string header = all.substr(0, all.find('\n'));
  all += ReadFileOrDie(out / "eval.csv") + ReadFileOrDie(out / "test.csv");
  const bool multiline_kept = all.find("\"Worst day\r\never\",-0.6,0\n") != std::string::npos;
  const bool quotes_kept = all.find("\"He said \"\"meh\"\" and left\",0,1\n") != std::string::npos;
  EXPECT_EQ(
      header + " " + std::to_string(multiline_kept) + std::to_string(quotes_kept) + " " +
          r.err.substr(0, r.err.find(" ...")) + "| " +
          r.out.substr(r.out.find("Train"), r.out.find("Target") - r.out.find("Train")),
      "id,bodyText,sentiment,Target 11 make-splits: dropped 2 of 12 rows with a missing value "
      "(1 no label, 1 no text); first at: " +
          Fixture("article_sentiment.csv") + ":10 " + Fixture("article_sentiment.csv") +
          ":11\n| Train : ((4, 4)) samples\nVal : ((3, 4)) samples\nTest : ((3, 4)) "
          "samples\n");
}

TEST(MakeSplitsCliTest, GcsOutputDirMapsToTheBucketRoot) {
  const fs::path root = MakeTestDir();
  auto r = MakeSplits({"--output-dir", "gs://my-bucket/splits/", "--text-column", "text",
                       "--label-column", "label", Fixture("labels.csv")},
                      {"TRAINYARD_BUCKET_ROOT=" + root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(root / "my-bucket" / "splits" / "labels.json")) << r.out;
}

struct BadCase {
  std::vector<std::string> args;
  std::string stderr_has;
};

TEST(MakeSplitsCliTest, BadInputsFailWithFileAndLineAndWriteNothing) {
  const fs::path dir = MakeTestDir();
  const std::string out = (dir / "splits").string();
  const std::vector<BadCase> cases = {
      {{Fixture("nope.csv")}, "file not found: " + Fixture("nope.csv")},
      {{"--text-column", "text", Fixture("article_sentiment.csv")},
       Fixture("article_sentiment.csv") + ":1: no column 'text' (columns: 'id', 'bodyText', "
                                          "'sentiment'); choose one with --text-column"},
      {{Fixture("non_numeric_sentiment.csv")},
       Fixture("non_numeric_sentiment.csv") + ":3: column 'sentiment': 'positive' is not a number"},
      {{Fixture("empty.csv")}, Fixture("empty.csv") + ":1: empty file"},
      {{Fixture("ragged_row.csv")},
       Fixture("ragged_row.csv") + ":3: row has 3 fields but the header has 2"},
      {{Fixture("bad_quote.csv")}, Fixture("bad_quote.csv") + ":3: malformed quoting at column 5"},
      {{Fixture("article_sentiment.csv"), Fixture("different_header.csv")},
       Fixture("different_header.csv") + ":1: columns differ from " +
           Fixture("article_sentiment.csv") + "'s: missing 'id', 'sentiment'; extra 'score'"},
      {{"--eval-fraction", "0.5", "--test-fraction", "0.6", Fixture("article_sentiment.csv")},
       "--eval-fraction + --test-fraction = 1.1 leaves nothing for training"},
      {{"--train-fraction", "0.7", Fixture("article_sentiment.csv")},
       "--train-fraction + --eval-fraction + --test-fraction must be 1, got 0.7 + 0.1 + 0.1 = 0.9"},
      {{"--label-order", "a,b", Fixture("labels.csv")}, "--label-order requires --label-column"},
  };
  std::string got, want;
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--output-dir", out};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = MakeSplits(args);
    const bool mentioned = r.err.find(c.stderr_has) != std::string::npos;
    got += std::string(r.exit_code != 0 ? "failed" : "succeeded") +
           (mentioned ? "" : " without '" + c.stderr_has + "' in: " + r.err) + "\n";
    want += "failed\n";
  }
  std::string left;
  for (const auto& e : fs::directory_iterator(dir)) left += e.path().filename().string() + " ";
  EXPECT_EQ(got + "left: " + left, want + "left: ");
}

TEST(MakeSplitsCliTest, MissingOutputDirIsAUsageError) {
  auto r = MakeSplits({Fixture("labels.csv")});
  EXPECT_NE(r.err.find("--output-dir is required"), std::string::npos) << r.exit_code << r.err;
}

}  // namespace
}  // namespace trainyard
