#include "text/utf8.h"

#include <gtest/gtest.h>

namespace trainyard::text {
namespace {

std::string Decoded(std::string_view s) {
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp;
    const size_t len = DecodeUtf8(s, pos, &cp);
    if (len == 0) {
      out += "<bad>";
      ++pos;
    } else {
      out += "U+" + std::to_string(cp) + " ";
      pos += len;
    }
  }
  return out;
}

TEST(Utf8Test, DecodesEveryLength) {
  EXPECT_EQ(Decoded("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"), "U+97 U+233 U+20013 U+128512 ");
}

TEST(Utf8Test, RejectsOverlongSurrogatesAndOutOfRange) {
  EXPECT_EQ(Decoded("\xC0\xAF"), "<bad><bad>");                    // overlong '/'
  EXPECT_EQ(Decoded("\xE0\x80\xAF"), "<bad><bad><bad>");           // overlong 3-byte
  EXPECT_EQ(Decoded("\xED\xA0\x80"), "<bad><bad><bad>");           // U+D800
  EXPECT_EQ(Decoded("\xF4\x90\x80\x80"), "<bad><bad><bad><bad>");  // > U+10FFFF
  EXPECT_EQ(Decoded("\xE4\xB8"), "<bad><bad>");                    // truncated
  EXPECT_EQ(Decoded("\xE4\xB8x"), "<bad><bad>U+120 ");             // truncated, then a valid char
}

TEST(Utf8Test, FindInvalidUtf8ReportsFirstBadOffset) {
  EXPECT_EQ(FindInvalidUtf8("plain ascii text that is longer than eight bytes"), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("caf\xC3\xA9 ok"), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("0123456789abc\xFFzz"), std::optional<size_t>(13));
  EXPECT_EQ(FindInvalidUtf8(std::string_view("\0\xC3", 2)), std::optional<size_t>(1));
}

TEST(Utf8Test, AppendUtf8RoundTrips) {
  std::string s;
  for (char32_t cp : {U'a', U'\u00E9', U'\u4E2D', U'\U0001F600', U'\U0010FFFF'}) AppendUtf8(cp, &s);
  EXPECT_EQ(s, "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF");
}

}  // namespace
}  // namespace trainyard::text
