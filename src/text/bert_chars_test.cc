#include "text/bert_chars.h"

#include <gtest/gtest.h>

namespace trainyard::text {
namespace {

// The character-class cases of transformers tests/models/bert/test_tokenization_bert.py
// (test_is_whitespace, test_is_control, test_is_punctuation), plus the corners HF relies on.
TEST(BertCharsTest, WhitespaceMatchesHf) {
  for (char32_t c : {U' ', U'\t', U'\r', U'\n', U'\u00A0', U'\u3000', U'\u2003'}) {
    EXPECT_TRUE(IsBertWhitespace(c)) << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U'A', U'-', U'\u000B', U'\u2028', U'\u200B'}) {
    EXPECT_FALSE(IsBertWhitespace(c)) << static_cast<uint32_t>(c);
  }
}

TEST(BertCharsTest, ControlMatchesHf) {
  for (char32_t c : {U'\u0005', U'\u0000', U'\u007F', U'\u00AD', U'\u200B', U'\uFEFF', U'\uE000',
                     U'\U0010FFFF'}) {
    EXPECT_TRUE(IsBertControl(c)) << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U'A', U' ', U'\t', U'\r', U'\n'}) {
    EXPECT_FALSE(IsBertControl(c)) << static_cast<uint32_t>(c);
  }
}

TEST(BertCharsTest, PunctuationMatchesHf) {
  for (char32_t c : {U'-', U'$', U'`', U'.', U'^', U'+', U'|', U'~', U'\u00BF', U'\u2019',
                     U'\u3001', U'\uFF01'}) {
    EXPECT_TRUE(IsBertPunctuation(c)) << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U'A', U' ', U'0', U'\u20AC', U'\u00A9', U'\U0001F600'}) {
    EXPECT_FALSE(IsBertPunctuation(c)) << static_cast<uint32_t>(c);
  }
}

TEST(BertCharsTest, CjkRangesAreHfsNotAllOfEastAsia) {
  EXPECT_TRUE(IsCjkIdeograph(U'\u535A'));
  EXPECT_TRUE(IsCjkIdeograph(U'\uF900'));
  EXPECT_TRUE(IsCjkIdeograph(U'\U00020000'));
  EXPECT_FALSE(IsCjkIdeograph(U'\u3053'));  // hiragana
  EXPECT_FALSE(IsCjkIdeograph(U'\uAC00'));  // hangul
  EXPECT_FALSE(IsCjkIdeograph(U'\u3001'));  // ideographic comma
}

TEST(BertCharsTest, LowerAndDecompose) {
  char32_t out[kMaxNormalized];
  ASSERT_EQ(LowerAndDecompose(U'\u00C9', out), 2u);  // É -> e + U+0301
  EXPECT_EQ(out[0], U'e');
  EXPECT_EQ(out[1], U'\u0301');
  // İ: Python's lower() gives "i" + U+0307, and the U+0307 (Mn) is stripped right after.
  ASSERT_EQ(LowerAndDecompose(U'\u0130', out), 1u);
  EXPECT_EQ(out[0], U'i');
  ASSERT_EQ(LowerAndDecompose(U'\u212B', out), 2u);  // ANGSTROM SIGN -> a + ring
  EXPECT_EQ(out[0], U'a');
  ASSERT_EQ(LowerAndDecompose(U'\uAC00', out), 2u);  // hangul syllable -> jamo
  EXPECT_EQ(out[0], U'\u1100');
  ASSERT_EQ(LowerAndDecompose(U'\uFB01', out), 1u);  // ligature fi: compatibility only, kept
  EXPECT_EQ(out[0], U'\uFB01');
}

TEST(BertCharsTest, ClassifyRawChar) {
  EXPECT_EQ(ClassifyRawChar(U'\u00AD'), RawCharKind::kDrop);
  EXPECT_EQ(ClassifyRawChar(U'\uFFFD'), RawCharKind::kDrop);
  EXPECT_EQ(ClassifyRawChar(U'\u2029'), RawCharKind::kSeparator);
  EXPECT_EQ(ClassifyRawChar(U'\u00A0'), RawCharKind::kSeparator);
  EXPECT_EQ(ClassifyRawChar(U'\u4E2D'), RawCharKind::kCjk);
  EXPECT_EQ(ClassifyRawChar(U'\u00E9'), RawCharKind::kText);
  EXPECT_EQ(CombiningClass(U'\u0301'), 230);
}

}  // namespace
}  // namespace trainyard::text
