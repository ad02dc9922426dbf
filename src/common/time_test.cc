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
