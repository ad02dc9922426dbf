#include "common/time.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(TimeTest, TimestampRoundTripAndOffsets) {
  auto t = ParseTimestamp("2021-05-18T02:00:00.5+02:00");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(FormatTimestamp(*t), "2021-05-18T00:00:00.500000Z");
}

TEST(TimeTest, TimestampKeepsMicrosecondsAndTruncatesNanoseconds) {
  auto t = ParseTimestamp("2026-11-22T02:41:52.123456789Z");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(std::to_string(ToUnixMicros(*t)) + " " + FormatTimestamp(*t),
            "1795315312123456 2026-11-22T02:41:52.123456Z");
}

// proto3 allows years 0001..9999, TimePoint (int64 nanoseconds) 1677..2262: times outside
// saturate instead of overflowing (a fuzzer found "1012-01-01T00:00:00Z" in a createTime).
TEST(TimeTest, TimestampsBeyondTimePointRangeSaturate) {
  auto early = ParseTimestamp("1012-01-01T00:00:00Z");
  auto first = ParseTimestamp("0001-01-01T00:00:00Z");
  auto last = ParseTimestamp("9999-12-31T23:59:59.999999Z");
  ASSERT_TRUE(early.ok() && first.ok() && last.ok());
  EXPECT_EQ(FormatTimestamp(*first).substr(0, 10), "1677-09-21");
  EXPECT_EQ(FormatTimestamp(*early).substr(0, 10), "1677-09-21");
  EXPECT_EQ(FormatTimestamp(*last).substr(0, 10), "2262-04-11");
  EXPECT_LT(*first, FromUnixMicros(0));
  EXPECT_GT(*last, FromUnixMicros(0));
  EXPECT_EQ(FromUnixMicros(INT64_MIN), FromUnixMicros(INT64_MIN + 1));
}

TEST(TimeTest, RejectsBadTimestamps) {
  std::string accepted;
  for (const char* text : {"2021-05-18", "2021-13-18T00:00:00Z", "2021-02-30T00:00:00Z",
                           "0000-01-01T00:00:00Z", "2021-05-18T00:00:00", "2021-05-18T00:00:00.Z",
                           "2021-05-18T00:00:00.1234567890Z", "2021-05-18T00:00:00+2:00"}) {
    if (ParseTimestamp(text).ok()) accepted += std::string(text) + " ";
  }
  EXPECT_EQ(accepted, "");
  EXPECT_EQ(ParseTimestamp("2021-02-30T00:00:00Z").status().message(),
            "'2021-02-30T00:00:00Z' is not an RFC 3339 time; expected e.g. 2021-05-18T00:00:00Z");
}

TEST(TimeTest, MicrosRoundTripBeforeTheEpoch) {
  TimePoint t = FromUnixMicros(-1500001);
  EXPECT_EQ(std::to_string(ToUnixMicros(t)) + " " + FormatTimestamp(t),
            "-1500001 1969-12-31T23:59:58.499999Z");
}

TEST(TimeTest, Durations) {
  EXPECT_EQ(FormatDuration(*ParseDuration("86400s")), "86400s");
  EXPECT_EQ(FormatDuration(*ParseDuration("1.5s")), "1.5s");
  EXPECT_EQ(FormatDuration(*ParseDuration("-0.000001999s")), "-0.000001s");
  EXPECT_EQ(FormatDuration(DurationFromSeconds(12.5)), "12.5s");
  EXPECT_EQ(DurationToSeconds(*ParseDuration("0.1s")), 0.1);
  EXPECT_EQ(ParseDuration("315576000000s").ok(), true);
  std::string accepted;
  for (const char* text :
       {"10m", "s", "1.s", ".5s", "1e3s", "+1s", "315576000001s", "1.0000000001s"}) {
    if (ParseDuration(text).ok()) accepted += std::string(text) + " ";
  }
  EXPECT_EQ(accepted, "");
}

}  // namespace
}  // namespace trainyard
