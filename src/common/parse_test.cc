#include "common/parse.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

std::string Show(std::string_view text) {
  auto v = ParseInt64(text);
  return v ? std::to_string(*v) : "none";
}

TEST(ParseTest, Int64AcceptsOnlyAWholeNumberInRange) {
  std::string got;
  for (const char* t : {"0", "-42", "9223372036854775807", "9223372036854775808", "", " 3", "3 ",
                        "12abc", "+5", "0x10", "1e3"}) {
    got += Show(t) + " ";
  }
  EXPECT_EQ(got, "0 -42 9223372036854775807 none none none none none none none none ");
}

}  // namespace
}  // namespace trainyard
