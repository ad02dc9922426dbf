#include "spec/time_util.h"

#include <gtest/gtest.h>

namespace trainyard::spec {
namespace {

TEST(TimeUtilTest, TimestampRoundTripAndOffsets) {
  auto t = ParseTimestamp("2021-05-18T02:00:00.5+02:00");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(FormatTimestamp(*t), "2021-05-18T00:00:00.500000Z");
}

TEST(TimeUtilTest, RejectsBadTimestamp) {
  EXPECT_FALSE(ParseTimestamp("2021-05-18").ok());
  EXPECT_FALSE(ParseTimestamp("2021-13-18T00:00:00Z").ok());
}

TEST(TimeUtilTest, Durations) {
  EXPECT_EQ(FormatDuration(*ParseDuration("86400s")), "86400s");
  EXPECT_EQ(FormatDuration(*ParseDuration("1.5s")), "1.5s");
  EXPECT_EQ(ParseDuration("10m").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDuration("s").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trainyard::spec
