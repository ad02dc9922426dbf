#include "testing/test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace trainyard::testing {
namespace {
namespace fs = std::filesystem;

TEST(MakeTestDirTest, IsEmptyAndUniqueToThisProcessAndTest) {
  const fs::path dir = MakeTestDir();
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_EQ(dir.filename(), "MakeTestDirTest.IsEmptyAndUniqueToThisProcessAndTest");
  EXPECT_EQ(dir.parent_path().filename(), std::to_string(::getpid()));
}

TEST(MakeTestDirTest, CallingAgainEmptiesTheDirectory) {
  const fs::path dir = MakeTestDir();
  WriteFileOrDie(dir / "left-over", "x");
  EXPECT_EQ(MakeTestDir(), dir);
  EXPECT_TRUE(fs::is_empty(dir));
}

// A process that has ended leaves its root behind; pruning happens on a process's first call, so
// the check runs in a fresh process.
TEST(MakeTestDirTest, RootsOfProcessesThatEndedAreRemovedAndLiveOnesKept) {
  const fs::path user_root = MakeTestDir().parent_path().parent_path();
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  const fs::path stale = user_root / std::to_string(dead) / "Old.Test";
  WriteFileOrDie(stale / "file", "x");
  const fs::path mine = user_root / std::to_string(::getpid());

  // The test binary itself, run again: a fresh process whose first MakeTestDir prunes.
  ProcessResult r = RunProcess({"/proc/self/exe", "--gtest_filter=MakeTestDirTest.CallingAgain*"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(stale.parent_path())) << "a dead process's root was kept";
  EXPECT_TRUE(fs::exists(mine)) << "a running process's root was removed";
}

}  // namespace
}  // namespace trainyard::testing
