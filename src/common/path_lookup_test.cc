#include "common/path_lookup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace trainyard {
namespace {

// Restores $PATH when the test ends.
class PathLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* p = std::getenv("PATH");
    had_path_ = p != nullptr;
    if (had_path_) saved_ = p;
  }
  void TearDown() override {
    if (had_path_) {
      ::setenv("PATH", saved_.c_str(), 1);
    } else {
      ::unsetenv("PATH");
    }
  }
  bool had_path_ = false;
  std::string saved_;
};

TEST_F(PathLookupTest, FindsExecutablesOnlyInPathsDirectories) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ty_path_lookup_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "runme") << "#!/bin/sh\n";
  std::ofstream(dir / "plainfile") << "data\n";
  ::chmod((dir / "runme").c_str(), 0755);
  ::chmod((dir / "plainfile").c_str(), 0644);
  ::setenv("PATH", ("/nonexistent::" + dir.string()).c_str(), 1);
  EXPECT_TRUE(OnPath("runme"));
  EXPECT_FALSE(OnPath("plainfile"));  // not executable
  EXPECT_FALSE(OnPath("missing"));
  ::unsetenv("PATH");
  EXPECT_FALSE(OnPath("runme"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainyard
