#include "storage/block_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "testing/test_util.h"

namespace trainyard::storage {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(BlockWriterTest, WritesEveryBlockInOrderWithTheHashesOfTheWhole) {
  const auto dir = testing::MakeTestDir();
  const auto path = dir / "object.tmp";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  std::string all;
  std::string md5, crc;
  {
    BlockWriter writer(fd, path);
    std::string buffer;
    for (int i = 0; i < 20; ++i) {
      buffer = RandomBytes(1000 + 97 * i, i);  // uneven sizes
      all += buffer;
      auto next = writer.Submit(std::move(buffer));
      ASSERT_TRUE(next.ok()) << next.status();
      EXPECT_TRUE(next->empty());
    }
    ASSERT_TRUE(writer.Finish(&md5, &crc).ok());
  }
  ::close(fd);
  EXPECT_EQ(testing::ReadFileOrDie(path), all);
  ObjectHasher whole;
  whole.Update(all.data(), all.size());
  std::string want_md5, want_crc;
  whole.Finish(&want_md5, &want_crc);
  EXPECT_EQ(md5 + " " + crc, want_md5 + " " + want_crc);
}

// A resumable upload's next chunk: appended after what the file holds, hashed into the running
// hash of the whole upload.
TEST(BlockWriterTest, AppendsAndContinuesTheCallersRunningHash) {
  const auto dir = testing::MakeTestDir();
  const auto path = dir / "session.part";
  const std::string first = RandomBytes(5000, 1);
  testing::WriteFileOrDie(path, first);
  ObjectHasher running;
  running.Update(first.data(), first.size());
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  std::string all = first;
  {
    BlockWriter writer(fd, path, &running, first.size());
    for (int i = 0; i < 5; ++i) {
      std::string block = RandomBytes(3000 + i, 10 + i);
      all += block;
      ASSERT_TRUE(writer.Submit(std::move(block)).ok());
    }
    ASSERT_TRUE(writer.Wait().ok());
    EXPECT_EQ(running.bytes(), all.size());
  }
  ::close(fd);
  EXPECT_EQ(testing::ReadFileOrDie(path), all);
  ObjectHasher whole;
  whole.Update(all.data(), all.size());
  std::string got_md5, got_crc, want_md5, want_crc;
  running.Finish(&got_md5, &got_crc);
  whole.Finish(&want_md5, &want_crc);
  EXPECT_EQ(got_md5 + " " + got_crc, want_md5 + " " + want_crc);
}

TEST(BlockWriterTest, AWriteErrorIsReportedAndNothingHangs) {
  const auto dir = testing::MakeTestDir();
  const auto path = dir / "readonly";
  testing::WriteFileOrDie(path, "x");
  int fd = ::open(path.c_str(), O_RDONLY);  // writes fail with EBADF
  ASSERT_GE(fd, 0);
  BlockWriter writer(fd, path);
  Status first = writer.Submit(std::string(4096, 'a')).status();
  Status later = Status::Ok();
  for (int i = 0; i < 5 && later.ok(); ++i) later = writer.Submit(std::string(10, 'b')).status();
  std::string md5, crc;
  Status finished = writer.Finish(&md5, &crc);
  EXPECT_FALSE(finished.ok());
  EXPECT_NE(finished.message().find(path.string()), std::string::npos) << finished;
  EXPECT_FALSE(later.ok() && first.ok() && finished.ok());
  ::close(fd);
}

TEST(BlockWriterTest, AnAbandonedWriterStopsItsThread) {
  const auto dir = testing::MakeTestDir();
  const auto path = dir / "abandoned";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  { BlockWriter writer(fd, path); }  // never used
  {
    BlockWriter writer(fd, path);
    ASSERT_TRUE(writer.Submit(std::string(100, 'z')).ok());
  }  // destroyed with a block possibly still queued: joins, no crash
  ::close(fd);
  // The queued block was either written whole or dropped: never half of it.
  const std::string left = testing::ReadFileOrDie(path);
  EXPECT_TRUE(left.empty() || left == std::string(100, 'z')) << left.size() << " bytes";
}

}  // namespace
}  // namespace trainyard::storage
