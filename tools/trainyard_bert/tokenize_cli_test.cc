// End-to-end tests of `trainyard-bert tokenize`: the real binary, the real sample vocabulary, and
// the oracle-generated golden cases (test/fixtures/tokenizer/bert_uncased_golden.jsonl).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/test_util.h"

namespace trainyard {
namespace {

using ::trainyard::testing::MakeTestDir;
using ::trainyard::testing::ProcessResult;
using ::trainyard::testing::ReadFileOrDie;
using ::trainyard::testing::RunProcess;
using ::trainyard::testing::SourcePath;
using ::trainyard::testing::ToolPath;
using ::trainyard::testing::WriteFileOrDie;

ProcessResult Tokenize(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv = {ToolPath("trainyard-bert").string(), "tokenize"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, input);
}

std::string Vocab() { return SourcePath("data/sample/vocab.txt").string(); }

TEST(TokenizeCliTest, GoldenCasesLineByLine) {
  std::ifstream in(SourcePath("test/fixtures/tokenizer/bert_uncased_golden.jsonl"));
  ASSERT_TRUE(in);
  std::string input, expected_ids, expected_tokens, line;
  int cases = 0;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    if (!row.contains("text")) continue;  // invalid UTF-8 case: see InvalidUtf8Replace
    const std::string text = row["text"];
    if (text.find('\n') != std::string::npos) continue;  // a line-based CLI cannot take these
    input += text + "\n";
    std::string ids = "101", tokens = "[CLS]";
    const auto& golden_ids = row["ids"];
    for (size_t i = 0; i < golden_ids.size() && i < 98; ++i) {
      ids += " " + std::to_string(golden_ids[i].get<int>());
      tokens += " " + row["tokens"][i].get<std::string>();
    }
    expected_ids += ids + " 102\n";
    expected_tokens += tokens + " [SEP]\n";
    ++cases;
  }
  EXPECT_GE(cases, 60);
  const auto as_ids = Tokenize({"--vocab", Vocab()}, input);
  EXPECT_EQ(as_ids.exit_code, 0) << as_ids.err;
  EXPECT_EQ(as_ids.out, expected_ids);
  const auto as_tokens = Tokenize({"--vocab", Vocab(), "--tokens"}, input);
  EXPECT_EQ(as_tokens.exit_code, 0) << as_tokens.err;
  EXPECT_EQ(as_tokens.out, expected_tokens);
}

TEST(TokenizeCliTest, MaxLengthTruncatesAndEmptyLinesGetSpecials) {
  const auto result = Tokenize({"--vocab", Vocab(), "--max-length", "4", "--threads", "2"},
                               "Hello there, how are you?\n\nhi");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "101 7592 2045 102\n101 102\n101 7632 102\n");
}

TEST(TokenizeCliTest, EmptyInputGivesNoOutput) {
  const auto result = Tokenize({"--vocab", Vocab()}, "");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST(TokenizeCliTest, InvalidUtf8NamesTheLine) {
  const auto result = Tokenize({"--vocab", Vocab()}, "hello\nworld\ncaf\xE9 latin1\nnever\n");
  EXPECT_EQ(result.exit_code, 65);  // EX_DATAERR
  EXPECT_EQ(result.out, "101 7592 102\n101 2088 102\n");
  EXPECT_NE(result.err.find("stdin line 3: invalid UTF-8 at byte 4"), std::string::npos)
      << result.err;
}

TEST(TokenizeCliTest, InvalidUtf8Replace) {
  const auto result = Tokenize({"--vocab", Vocab(), "--on-invalid-utf8", "replace", "--tokens"},
                               "caf\xE9 ok\xFF\xFE!\n");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  // Expected output from scripts/bert_tokenizer_oracle.py (Python decode(errors="replace") + HF).
  EXPECT_EQ(result.out, "[CLS] caf ok ! [SEP]\n");
}

TEST(TokenizeCliTest, MissingVocabFile) {
  const auto dir = MakeTestDir();
  const auto result = Tokenize({"--vocab", (dir / "missing.txt").string()}, "hi\n");
  EXPECT_EQ(result.exit_code, 66);  // EX_NOINPUT: the --vocab file is missing
  EXPECT_NE(result.err.find("missing.txt does not exist"), std::string::npos) << result.err;
}

TEST(TokenizeCliTest, VocabWithoutSpecialTokens) {
  const auto dir = MakeTestDir();
  WriteFileOrDie(dir / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\nhello\n");
  const auto result = Tokenize({"--vocab", (dir / "vocab.txt").string()}, "hi\n");
  EXPECT_EQ(result.exit_code, 64);  // EX_USAGE: the --vocab file is unusable
  EXPECT_NE(result.err.find("has no [SEP] token"), std::string::npos) << result.err;
}

TEST(TokenizeCliTest, BadMaxLength) {
  const auto result = Tokenize({"--vocab", Vocab(), "--max-length", "1"}, "hi\n");
  EXPECT_EQ(result.exit_code, 64);
  EXPECT_NE(result.err.find("--max-length must be at least 2"), std::string::npos) << result.err;
  const auto not_a_number = Tokenize({"--vocab", Vocab(), "--max-length", "ten"}, "hi\n");
  EXPECT_NE(not_a_number.exit_code, 0);
  EXPECT_NE(not_a_number.err.find("--max-length"), std::string::npos) << not_a_number.err;
}

TEST(TokenizeCliTest, VocabIsRequired) {
  const auto result = Tokenize({}, "hi\n");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("--vocab"), std::string::npos) << result.err;
}

TEST(TokenizeCliTest, JsonVocab) {
  const auto dir = MakeTestDir();
  WriteFileOrDie(dir / "vocab.json", R"(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hi"])");
  const auto result = Tokenize({"--vocab", (dir / "vocab.json").string()}, "Hi, hi\n");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "2 5 1 5 3\n");
}

TEST(TokenizeCliTest, ManyLinesAcrossBatches) {
  // More lines than one batch (16384). Through files: RunProcess writes stdin in one blocking
  // write, which stalls once both pipes fill up with this much data.
  const auto dir = MakeTestDir();
  std::string input, expected;
  for (int i = 0; i < 40000; ++i) {
    input += i % 2 ? "Hello there, how are you?\n" : "\n";
    expected += i % 2 ? "101 7592 2045 1010 2129 2024 2017 1029 102\n" : "101 102\n";
  }
  WriteFileOrDie(dir / "in.txt", input);
  const auto result =
      RunProcess({"/bin/sh", "-c", "\"$0\" tokenize --vocab \"$1\" < \"$2\" > \"$3\"",
                  ToolPath("trainyard-bert").string(), Vocab(), (dir / "in.txt").string(),
                  (dir / "out.txt").string()});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const std::string out = ReadFileOrDie(dir / "out.txt");
  EXPECT_TRUE(out == expected) << "output differs (" << out.size() << " bytes)";
}

}  // namespace
}  // namespace trainyard
