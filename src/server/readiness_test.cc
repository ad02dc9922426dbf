#include "server/readiness.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::server {
namespace {

TEST(ReadinessTest, AWritableDataDirWithRoomIsReadyAndLeavesNothingBehind) {
  const auto dir = testing::MakeTestDir();
  EXPECT_TRUE(CheckReadiness(dir, 1 << 20).ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(ReadinessTest, TooLittleRoomOrNoWriteIsUnavailableNamingTheDir) {
  const auto dir = testing::MakeTestDir();
  Status full = CheckReadiness(dir, ~uint64_t{0});
  EXPECT_EQ(full.code(), StatusCode::kUnavailable);
  EXPECT_NE(full.message().find("data dir " + dir.string() + " has "), std::string::npos)
      << full.message();
  // Even root cannot write below a file.
  testing::WriteFileOrDie(dir / "file", "x");
  Status blocked = CheckReadiness(dir / "file", 0);
  EXPECT_EQ(blocked.code(), StatusCode::kUnavailable);
  EXPECT_NE(blocked.message().find("does not take a write (Not a directory)"), std::string::npos)
      << blocked.message();
}

}  // namespace
}  // namespace trainyard::server
