#include "text/wordpiece_vocab.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::text {
namespace {

using ::trainyard::testing::MakeTestDir;
using ::trainyard::testing::WriteFileOrDie;

std::string Joined(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) out += "<" + t + ">";
  return out;
}

TEST(WordPieceVocabTest, FindsStartAndContinuationPieces) {
  auto vocab = WordPieceVocab::FromTokens({"[UNK]", "want", "##want", "##ed", "un", "##"});
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  EXPECT_EQ(vocab->Find("want"), 1);
  EXPECT_EQ(vocab->Find("##want"), 2);
  EXPECT_EQ(vocab->FindContinuation("want"), 2);
  EXPECT_EQ(vocab->FindContinuation("ed"), 3);
  EXPECT_EQ(vocab->FindContinuation("un"), -1);
  EXPECT_EQ(vocab->Find("ed"), -1);
  EXPECT_EQ(vocab->Find("##"), 5);
  EXPECT_EQ(vocab->max_token_bytes(), 6u);
  EXPECT_EQ(vocab->max_continuation_bytes(), 4u);
}

TEST(WordPieceVocabTest, LaterDuplicateWinsLikeHf) {
  auto vocab = WordPieceVocab::FromTokens({"a", "b", "a"});
  ASSERT_TRUE(vocab.ok());
  EXPECT_EQ(vocab->Find("a"), 2);
  EXPECT_EQ(vocab->token(0), "a");
  EXPECT_EQ(vocab->size(), 3u);
}

TEST(WordPieceVocabTest, CopiesStayValid) {
  auto vocab = WordPieceVocab::FromTokens({"alpha", "##beta"});
  ASSERT_TRUE(vocab.ok());
  WordPieceVocab copy = *vocab;
  vocab = WordPieceVocab::FromTokens({"other"});
  EXPECT_EQ(copy.Find("alpha"), 0);
  EXPECT_EQ(copy.FindContinuation("beta"), 1);
}

TEST(WordPieceVocabTest, ManyTokensAllFound) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 50000; ++i) tokens.push_back("t" + std::to_string(i));
  auto vocab = WordPieceVocab::FromTokens(tokens);
  ASSERT_TRUE(vocab.ok());
  int wrong = 0;
  for (int i = 0; i < 50000; ++i) wrong += vocab->Find(tokens[i]) != i;
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(vocab->Find("t50000"), -1);
}

TEST(WordPieceVocabTest, KeysOfEveryLengthIncludingInlineBoundary) {
  // Keys up to 8 bytes live inside the hash slot, longer ones in the arena; lengths over 255
  // share one tag value.
  std::vector<std::string> tokens;
  for (size_t len = 1; len <= 300; ++len) {
    tokens.push_back(std::string(len, 'a'));
    tokens.push_back("##" + std::string(len - 1, 'b') + "c");
  }
  auto vocab = WordPieceVocab::FromTokens(tokens);
  ASSERT_TRUE(vocab.ok());
  std::string wrong;
  for (size_t len = 1; len <= 300; ++len) {
    if (vocab->Find(std::string(len, 'a')) != static_cast<int32_t>(2 * (len - 1))) {
      wrong += " a" + std::to_string(len);
    }
    if (vocab->FindContinuation(std::string(len - 1, 'b') + "c") !=
        static_cast<int32_t>(2 * len - 1)) {
      wrong += " c" + std::to_string(len);
    }
    if (vocab->Find(std::string(len, 'b')) != -1) wrong += " b" + std::to_string(len);
  }
  EXPECT_EQ(wrong, "");
  EXPECT_EQ(vocab->Find(std::string("a\0", 2)), -1);  // zero padding is not a wildcard
  EXPECT_EQ(vocab->Find(""), -1);
}

TEST(WordPieceVocabTest, EmptyIsAnError) {
  EXPECT_EQ(WordPieceVocab::FromTokens({}).status().code(), StatusCode::kInvalidArgument);
}

TEST(ReadVocabTokensTest, TextFileLinesLikePythonUniversalNewlines) {
  const auto dir = MakeTestDir();
  WriteFileOrDie(dir / "vocab.txt", "\xEF\xBB\xBF[PAD]\r\n[UNK]\rhello\n\n##lo\n");
  auto tokens = ReadVocabTokens(dir / "vocab.txt");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ(Joined(*tokens), "<[PAD]><[UNK]><hello><><##lo>");
}

TEST(ReadVocabTokensTest, LastLineWithoutNewline) {
  const auto dir = MakeTestDir();
  WriteFileOrDie(dir / "vocab.txt", "a\nb");
  EXPECT_EQ(Joined(*ReadVocabTokens(dir / "vocab.txt")), "<a><b>");
}

TEST(ReadVocabTokensTest, JsonListObjectAndTokenizerJson) {
  const auto dir = MakeTestDir();
  WriteFileOrDie(dir / "list.json", R"(["[PAD]", "x", "##y"])");
  WriteFileOrDie(dir / "map.json", R"({"x": 1, "[PAD]": 0, "##y": 2})");
  WriteFileOrDie(
      dir / "tokenizer.json",
      R"({"version": "1.0", "model": {"type": "WordPiece", "vocab": {"##y": 2, "x": 1, "[PAD]": 0}}})");
  for (const char* name : {"list.json", "map.json", "tokenizer.json"}) {
    auto tokens = ReadVocabTokens(dir / name);
    ASSERT_TRUE(tokens.ok()) << name << ": " << tokens.status();
    EXPECT_EQ(Joined(*tokens), "<[PAD]><x><##y>") << name;
  }
}

TEST(ReadVocabTokensTest, ErrorsNameTheProblem) {
  const auto dir = MakeTestDir();
  EXPECT_EQ(ReadVocabTokens(dir / "missing.txt").status().code(), StatusCode::kNotFound);
  WriteFileOrDie(dir / "bad.json", R"(["a", 3])");
  auto bad = ReadVocabTokens(dir / "bad.json");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("entry 1"), std::string::npos) << bad.status();
  WriteFileOrDie(dir / "gap.json", R"({"a": 0, "b": 2})");
  EXPECT_NE(ReadVocabTokens(dir / "gap.json").status().message().find("\"b\" has id 2"),
            std::string::npos);
  WriteFileOrDie(dir / "broken.json", R"(["a", )");
  EXPECT_EQ(ReadVocabTokens(dir / "broken.json").status().code(), StatusCode::kInvalidArgument);
  WriteFileOrDie(dir / "latin1.txt", "ok\ncaf\xE9\n");
  auto latin1 = ReadVocabTokens(dir / "latin1.txt");
  EXPECT_NE(latin1.status().message().find("latin1.txt:2: invalid UTF-8"), std::string::npos)
      << latin1.status();
}

}  // namespace
}  // namespace trainyard::text
