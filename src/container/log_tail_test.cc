#include "container/log_tail.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/test_util.h"

namespace trainyard::container {
namespace {

struct Collected {
  std::string out, err;
  LogTail::Sink sink() {
    return [this](int stream, std::string_view data) { (stream == 1 ? out : err) += data; };
  }
};

TEST(LogTailTest, RelaysRecordsAsPodmanLogsPrintsThem) {
  Collected c;
  EXPECT_TRUE(LogTail::Relay("2026-11-29T04:00:00.000000001+00:00 stdout F first line", c.sink()));
  EXPECT_TRUE(LogTail::Relay("2026-11-29T04:00:00.000000002+00:00 stderr P half ", c.sink()));
  EXPECT_TRUE(LogTail::Relay("2026-11-29T04:00:00.000000003+00:00 stderr F and half", c.sink()));
  EXPECT_TRUE(LogTail::Relay("2026-11-29T04:00:00.000000004+00:00 stdout F ", c.sink()));
  EXPECT_FALSE(LogTail::Relay("garbage", c.sink()));
  EXPECT_EQ(c.out, "first line\n\ngarbage\n");
  EXPECT_EQ(c.err, "half and half\n");
}

TEST(LogTailTest, FollowsAFileAsItGrowsAndWaitsForWholeRecords) {
  const auto dir = testing::MakeTestDir();
  LogTail tail(dir / "ctr.log");
  Collected c;
  EXPECT_FALSE(tail.Poll(c.sink()));  // not created yet
  (void)tail.wait_fd();
  std::ofstream f(dir / "ctr.log");
  f << "t stdout F one\nt stderr F tw" << std::flush;
  EXPECT_TRUE(tail.Poll(c.sink()));
  EXPECT_EQ(c.out, "one\n");
  EXPECT_EQ(c.err, "");
  f << "o\n" << std::flush;
  EXPECT_TRUE(tail.Poll(c.sink()));
  EXPECT_EQ(c.err, "two\n");
}

}  // namespace
}  // namespace trainyard::container
