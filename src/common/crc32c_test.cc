#include "common/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace trainyard {
namespace {

// RFC 3720 (iSCSI) appendix B.4 and the standard check value.
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
}

TEST(Crc32cTest, ExtendsAcrossPiecesOfAnyAlignment) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>(i * 7 + 3);
  const uint32_t whole = Crc32c(text);
  for (size_t cut : {0, 1, 7, 8, 333, 999, 1000}) {
    EXPECT_EQ(Crc32cExtend(Crc32cExtend(0, text.data(), cut), text.data() + cut, text.size() - cut),
              whole)
        << "cut at " << cut;
  }
}

}  // namespace
}  // namespace trainyard
