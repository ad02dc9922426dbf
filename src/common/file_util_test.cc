#include "common/file_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace trainyard {
namespace {
namespace fs = std::filesystem;

fs::path TempDir() {
  fs::path d =
      fs::temp_directory_path() / ("ty_file_util_" + std::to_string(::getpid()) + "_" +
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

// A special file (here a FIFO, like /dev/null a non-regular file) is written to, never replaced:
// renaming over /dev/null would turn it into a regular file for the whole machine.
TEST(FileUtilTest, AtomicWriteStreamsIntoSpecialFilesInsteadOfReplacingThem) {
  fs::path d = TempDir();
  const fs::path fifo = d / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(WriteFileAtomic(fifo, "metrics").ok());
  char buf[16] = {};
  const ssize_t n = ::read(reader, buf, sizeof(buf) - 1);
  ::close(reader);
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0) + (S_ISFIFO(st.st_mode) ? " fifo" : " replaced"),
            "metrics fifo");
}

TEST(FileUtilTest, AtomicWriteOntoADirectoryIsRefused) {
  fs::path d = TempDir();
  fs::create_directories(d / "dir");
  Status s = WriteFileAtomic(d / "dir", "x");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.message();
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
