#include "container/log_tail.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

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

// The background tail relays a file created and written after it started, while the caller is
// busy elsewhere (no Poll of its own); Stop hands the tail back with everything relayed.
TEST(LogTailTest, BackgroundTailRelaysAsTheFileIsWrittenUntilStopped) {
  const auto dir = testing::MakeTestDir();
  LogTail tail(dir / "ctr.log");
  std::mutex mu;
  std::string out;
  std::atomic<int> calls{0};
  BackgroundTail background(tail, [&](int stream, std::string_view data) {
    std::lock_guard lock(mu);
    if (stream == 1) out += data;
    ++calls;
  });
  std::ofstream f(dir / "ctr.log");
  f << "t stdout F first\n" << std::flush;
  for (int i = 0; i < 500 && calls.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(out, "first\n") << "relayed without a Poll by the caller";
  }
  f << "t stdout F second\n" << std::flush;
  background.Stop();
  background.Stop();  // idempotent
  EXPECT_EQ(out, "first\nsecond\n") << "Stop polls once more before it returns";
  f << "t stdout F third\n" << std::flush;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(out, "first\nsecond\n") << "nothing after Stop";
  EXPECT_TRUE(tail.Poll([&](int, std::string_view data) { out += data; }));
  EXPECT_EQ(out, "first\nsecond\nthird\n") << "the tail goes on where the thread left it";
}

}  // namespace
}  // namespace trainyard::container
