#include "train/batch_builder.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::train {
namespace {

text::BertTokenizer TinyTokenizer() {
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "vocab.txt",
                          "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\ngood\n");
  auto t = text::BertTokenizer::FromFile(dir / "vocab.txt");
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(t).value();
}

TEST(BatchBuilderTest, PadsToLongestOrFixedLength) {
  auto tokenizer = TinyTokenizer();
  TokenizedSet set =
      TokenizedSet::Encode(tokenizer, {"hello", "hello world good", "good"}, {0, 1, 1},
                           /*max_length=*/10, 1);
  ASSERT_EQ(set.length(1), 5);  // [CLS] hello world good [SEP]
  BatchBuilder builder(4, 10, tokenizer.pad_id(), torch::kCPU);
  Batch b = builder.Build(set, {1, 0}, 0);
  EXPECT_EQ(c10::str(b.input_ids), c10::str(torch::tensor({{2, 5, 6, 7, 3}, {2, 5, 3, 0, 0}})));
  EXPECT_EQ(c10::str(b.attention_mask),
            c10::str(torch::tensor({{1, 1, 1, 1, 1}, {1, 1, 1, 0, 0}})));
  EXPECT_EQ(c10::str(b.labels), c10::str(torch::tensor({1, 0})));
  EXPECT_EQ(b.real_tokens, 8);
  Batch fixed = builder.Build(set, {2}, 6);
  EXPECT_EQ(c10::str(fixed.input_ids), c10::str(torch::tensor({{2, 7, 3, 0, 0, 0}})));
}

TEST(BatchBuilderTest, TruncatesAtMaxLength) {
  auto tokenizer = TinyTokenizer();
  TokenizedSet set = TokenizedSet::Encode(tokenizer, {"hello world good hello world"}, {0}, 4, 1);
  EXPECT_EQ(set.length(0), 4);  // [CLS] hello world [SEP]
}

}  // namespace
}  // namespace trainyard::train
