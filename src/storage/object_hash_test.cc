#include "storage/object_hash.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainyard::storage {
namespace {

TEST(ObjectHashTest, Crc32cMatchesKnownVectors) {
  // RFC 3720 B.4 check value and GCS's documented example ("hello world" is yZRlqg==).
  EXPECT_EQ(Crc32cExtend(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32cBase64(Crc32cExtend(0, "hello world", 11)), "yZRlqg==");
}

TEST(ObjectHashTest, Crc32cExtendsAcrossPieces) {
  const std::string text(1000, 'x');
  uint32_t whole = Crc32cExtend(0, text.data(), text.size());
  uint32_t pieces = Crc32cExtend(Crc32cExtend(0, text.data(), 333), text.data() + 333, 667);
  EXPECT_EQ(whole, pieces);
}

TEST(ObjectHashTest, HasherGivesGcsEncodings) {
  ObjectHasher h;
  h.Update("hello ", 6);
  h.Update("world", 5);
  std::string md5, crc;
  h.Finish(&md5, &crc);
  EXPECT_EQ(md5 + " " + crc, "XrY7u+Ae7tCTyyK7j1rNww== yZRlqg==");
}

TEST(ObjectHashTest, Base64RoundTrips) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    std::string back;
    ASSERT_TRUE(Base64Decode(Base64Encode(s), &back));
    EXPECT_EQ(back, s);
  }
  std::string out;
  EXPECT_FALSE(Base64Decode("ab$d", &out));
}

}  // namespace
}  // namespace trainyard::storage
