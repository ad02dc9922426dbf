// Unit tests on the toy vocabulary of transformers' tests/models/bert/test_tokenization_bert.py,
// with the expected outputs that file asserts (quoted in shared/reference/bert-trainer-facts.md
// §2.4). The real-vocabulary golden cases are in bert_tokenizer_golden_test.cc.
#include "text/bert_tokenizer.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::text {
namespace {

using ::trainyard::testing::MakeTestDir;
using ::trainyard::testing::WriteFileOrDie;

// HF's toy vocab, ids 0-14.
const std::vector<std::string> kToyVocab = {"[UNK]", "[CLS]",  "[SEP]", "[PAD]", "[MASK]",
                                            "want",  "##want", "##ed",  "wa",    "un",
                                            "runn",  "##ing",  ",",     "low",   "lowest"};

BertTokenizer Toy() {
  auto tokenizer = BertTokenizer::FromTokens(kToyVocab);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return *std::move(tokenizer);
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

std::string Join(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

TEST(BertTokenizerTest, FullTokenizerToyVocab) {
  const auto tokenizer = Toy();
  EXPECT_EQ(Join(tokenizer.Tokenize("UNwant\u00E9d,running")), "un ##want ##ed , runn ##ing");
  EXPECT_EQ(Join(tokenizer.TokenizeToIds("UNwant\u00E9d,running")), "9 6 7 12 10 11");
}

TEST(BertTokenizerTest, BasicTokenizerLower) {
  const auto tokenizer = Toy();
  EXPECT_EQ(Join(tokenizer.BasicTokenize(" \tHeLLo!how  \n Are yoU?  ")), "hello ! how are you ?");
  EXPECT_EQ(Join(tokenizer.BasicTokenize("H\u00E9llo")), "hello");
}

TEST(BertTokenizerTest, BasicTokenizerChinese) {
  EXPECT_EQ(Join(Toy().BasicTokenize("ah\u535A\u63A8zz")), "ah \u535A \u63A8 zz");
}

TEST(BertTokenizerTest, BasicTokenizerSplitsEveryPunctuation) {
  EXPECT_EQ(Join(Toy().BasicTokenize("a\n'll !!to?'d of, can't.")),
            "a ' ll ! ! to ? ' d of , can ' t .");
}

TEST(BertTokenizerTest, WordpieceToyCases) {
  const auto tokenizer = Toy();
  EXPECT_EQ(Join(tokenizer.Tokenize("")), "");
  EXPECT_EQ(Join(tokenizer.Tokenize("unwanted running")), "un ##want ##ed runn ##ing");
  EXPECT_EQ(Join(tokenizer.Tokenize("unwantedX running")), "[UNK] runn ##ing");
}

TEST(BertTokenizerTest, SoftHyphenVanishes) {
  // HF: ["Test", "\xad", "test"] -> [["[UNK]"], [], ["[UNK]"]] on the toy vocab.
  const auto tokenizer = Toy();
  EXPECT_EQ(Join(tokenizer.Tokenize("Test")), "[UNK]");
  EXPECT_EQ(tokenizer.Tokenize("\u00AD").size(), 0u);
  EXPECT_EQ(Join(tokenizer.Tokenize("test")), "[UNK]");
}

TEST(BertTokenizerTest, WordOverHundredCharsIsUnk) {
  const auto tokenizer = Toy();
  std::string hundred;
  for (int i = 0; i < 25; ++i) hundred += "want";
  EXPECT_EQ(tokenizer.Tokenize(hundred).size(), 25u);
  EXPECT_EQ(Join(tokenizer.Tokenize(hundred + "s")), "[UNK]");
}

TEST(BertTokenizerTest, HugeWordWithoutSpacesIsOneUnk) {
  const auto tokenizer = Toy();
  std::string text = "want ";
  for (int i = 0; i < 1000000; ++i) text += i % 3 ? "W\u00E9" : "a";
  text += ", running";
  EXPECT_EQ(Join(tokenizer.Tokenize(text)), "want [UNK] , runn ##ing");
  EXPECT_EQ(tokenizer.BasicTokenize(text)[1].size(), 1000000u / 3 + 1 + 2 * (1000000u * 2 / 3));
}

TEST(BertTokenizerTest, LiteralSpecialTokensStayWhole) {
  const auto tokenizer = Toy();
  EXPECT_EQ(Join(tokenizer.Tokenize("want[MASK]running [SEP]")), "want [MASK] runn ##ing [SEP]");
  EXPECT_EQ(Join(tokenizer.TokenizeToIds("[CLS][PAD]")), "1 3");
  EXPECT_EQ(Join(tokenizer.BasicTokenize("[mask]")), "[ mask ]");
}

TEST(BertTokenizerTest, EncodeAddsSpecialsAndTruncatesFromTheRight) {
  const auto tokenizer = Toy();
  const Encoding e = tokenizer.Encode("unwanted running", 5);
  EXPECT_EQ(Join(e.input_ids), "1 9 6 7 2");  // [CLS] un ##want ##ed [SEP]
  EXPECT_EQ(Join(e.attention_mask), "1 1 1 1 1");
  EXPECT_EQ(Join(e.token_type_ids), "0 0 0 0 0");
  EXPECT_EQ(Join(tokenizer.Encode("unwanted running").input_ids), "1 9 6 7 10 11 2");
  EXPECT_EQ(Join(tokenizer.Encode("").input_ids), "1 2");
  EXPECT_EQ(Join(tokenizer.Encode("unwanted", 2).input_ids), "1 2");
  EXPECT_EQ(Join(tokenizer.Encode("unwanted", -7).input_ids), "1 2");
}

TEST(BertTokenizerTest, EncodePairTruncatesLongestFirst) {
  const auto tokenizer = Toy();
  // "want want want want" (4) + "low" (1), max 7: cut 1 from the longer first.
  const Encoding e = tokenizer.EncodePair("want want want want", "low", 7);
  EXPECT_EQ(Join(e.input_ids), "1 5 5 5 2 13 2");
  EXPECT_EQ(Join(e.token_type_ids), "0 0 0 0 0 1 1");
  EXPECT_EQ(Join(e.attention_mask), "1 1 1 1 1 1 1");
  EXPECT_EQ(Join(tokenizer.EncodePair("want", "low", 0).input_ids), "1 2 2");
}

TEST(BertTokenizerTest, EncodeBatchEqualsEncodeOnManyThreads) {
  const auto tokenizer = Toy();
  std::vector<std::string> texts;
  const char* samples[] = {"unwanted running", "", "low, lowest!", "UNwant\u00E9d,running",
                           "wa wa [MASK] want"};
  for (int i = 0; i < 1000; ++i) {
    std::string text;
    for (int k = 0; k <= i % 23; ++k) text += std::string(samples[(i + k) % 5]) + " ";
    texts.push_back(text);
  }
  for (int threads : {1, 3, 8, 0}) {
    const auto batch = tokenizer.EncodeBatch(texts, 16, threads);
    ASSERT_EQ(batch.size(), texts.size());
    size_t mismatches = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const Encoding single = tokenizer.Encode(texts[i], 16);
      mismatches += batch[i].input_ids != single.input_ids ||
                    batch[i].attention_mask != single.attention_mask ||
                    batch[i].token_type_ids != single.token_type_ids;
    }
    EXPECT_EQ(mismatches, 0u) << threads << " threads";
  }
  EXPECT_TRUE(tokenizer.EncodeBatch({}, 16, 4).empty());
}

TEST(BertTokenizerTest, SpecialIdsAndLookups) {
  const auto tokenizer = Toy();
  EXPECT_EQ(tokenizer.pad_id(), 3);
  EXPECT_EQ(tokenizer.unk_id(), 0);
  EXPECT_EQ(tokenizer.cls_id(), 1);
  EXPECT_EQ(tokenizer.sep_id(), 2);
  EXPECT_EQ(tokenizer.mask_id(), 4);
  EXPECT_EQ(tokenizer.vocab_size(), 15u);
  EXPECT_EQ(tokenizer.token(13), "low");
  EXPECT_EQ(tokenizer.id("##ing"), std::optional<int32_t>(11));
  EXPECT_EQ(tokenizer.id("missing"), std::nullopt);
}

TEST(BertTokenizerTest, CopiesShareTheVocabulary) {
  auto original = std::make_unique<BertTokenizer>(Toy());
  const BertTokenizer copy = *original;
  original.reset();
  EXPECT_EQ(Join(copy.Tokenize("unwanted")), "un ##want ##ed");
}

TEST(BertTokenizerTest, VocabWithoutSpecialsIsRejectedByName) {
  // HF's 10-token WordPiece test vocab has no [PAD] and no [MASK].
  auto tokenizer = BertTokenizer::FromTokens(
      {"[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing"});
  EXPECT_EQ(tokenizer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(tokenizer.status().message().find("no [PAD] token"), std::string::npos)
      << tokenizer.status();
}

TEST(BertTokenizerTest, FromFileErrors) {
  const auto dir = MakeTestDir();
  auto missing = BertTokenizer::FromFile(dir / "nope.txt");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  WriteFileOrDie(dir / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  auto no_mask = BertTokenizer::FromFile(dir / "vocab.txt");
  EXPECT_EQ(no_mask.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_mask.status().message().find("vocab.txt: the vocabulary has no [MASK]"),
            std::string::npos)
      << no_mask.status();
  WriteFileOrDie(dir / "vocab.json", R"(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hi"])");
  auto json = BertTokenizer::FromFile(dir / "vocab.json");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(Join(json->TokenizeToIds("Hi hi")), "5 5");
}

TEST(BertTokenizerTest, InvalidUtf8BytesAreDroppedLikeReplacementChars) {
  const auto tokenizer = Toy();
  EXPECT_EQ(Join(tokenizer.Tokenize("un\xFFwant\xC3")), "un ##want");
  EXPECT_EQ(Join(tokenizer.Tokenize("\xED\xA0\x80 runn\xE4\xB8ing")), "runn ##ing");
}

TEST(BertTokenizerTest, CanonicalOrderingOfNonStarters) {
  // U+1D16D (ccc 226) then U+1D165 (ccc 216) reorder under NFD; both are Mc so they survive.
  const auto tokenizer = Toy();
  EXPECT_EQ(Join(tokenizer.BasicTokenize("x\U0001D16D\U0001D165")), "x\U0001D165\U0001D16D");
  EXPECT_EQ(Join(tokenizer.BasicTokenize("x\U0001D16D\u0301\U0001D165y")),
            "x\U0001D165\U0001D16Dy");
}

}  // namespace
}  // namespace trainyard::text
