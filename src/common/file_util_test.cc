#include "common/file_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace trainyard {
namespace {
namespace fs = std::filesystem;

fs::path TempDir() {
  fs::path d = fs::temp_directory_path() /
               ("ty_file_util_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(FileUtilTest, AtomicWriteReplacesContentAndLeavesNoTemp) {
  fs::path d = TempDir();
  ASSERT_TRUE(WriteFileAtomic(d / "sub" / "a.txt", "one").ok());
  ASSERT_TRUE(WriteFileAtomic(d / "sub" / "a.txt", "two").ok());
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d / "sub")) ++files;
  EXPECT_EQ(*ReadFile(d / "sub" / "a.txt") + "/" + std::to_string(files), "two/1");
}

TEST(FileUtilTest, ReadMissingFileIsNotFound) {
  EXPECT_EQ(ReadFile("/nonexistent/x").status().code(), StatusCode::kNotFound);
}

TEST(FileUtilTest, CommitDirectoryReplacesOldDirectory) {
  fs::path d = TempDir();
  ASSERT_TRUE(WriteFileAtomic(d / "out" / "old.txt", "old").ok());
  auto staging = MakeStagingDir(d / "out");
  ASSERT_TRUE(staging.ok());
  ASSERT_TRUE(WriteFileAtomic(*staging / "new.txt", "new").ok());
  ASSERT_TRUE(CommitDirectory(*staging, d / "out").ok());
  EXPECT_EQ(std::to_string(fs::exists(d / "out" / "old.txt")) + *ReadFile(d / "out" / "new.txt") +
                std::to_string(fs::exists(*staging)),
            "0new0");
}

TEST(FileUtilTest, CommitDirectoryAcceptsTrailingSlash) {
  fs::path d = TempDir();
  ASSERT_TRUE(WriteFileAtomic(d / "model" / "old.txt", "old").ok());
  fs::path with_slash = d / "model" / "";
  auto staging = MakeStagingDir(with_slash);
  ASSERT_TRUE(staging.ok()) << staging.status();
  ASSERT_TRUE(WriteFileAtomic(*staging / "new.txt", "new").ok());
  Status s = CommitDirectory(*staging, with_slash);
  ASSERT_TRUE(s.ok()) << s;
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++entries;
  EXPECT_EQ(*ReadFile(d / "model" / "new.txt") + "/" + std::to_string(entries), "new/1");
}

}  // namespace
}  // namespace trainyard
