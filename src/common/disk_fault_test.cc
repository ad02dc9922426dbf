#include "common/disk_fault.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace trainyard {
namespace {

TEST(DiskFaultTest, ErrnosThatMeanNoRoomOrReadOnly) {
  const auto dir = std::filesystem::temp_directory_path() / "no-such-dir" / "file";
  std::string seen;
  for (int err : {ENOSPC, EDQUOT, EROFS, EACCES, EIO}) {
    seen += std::string(DiskFaultReason(ClassifyWriteError(err, dir))) + ";";
  }
  EXPECT_EQ(seen, "disk full;disk full;read-only file system;;;");
}

TEST(DiskFaultTest, TheMessageNamesThePlaceAndTheLogGetsThePath) {
  std::string logged;
  SetDiskFaultReporter([&](const std::string& line) { logged = line; });
  const auto path = std::filesystem::temp_directory_path() / "jobs.db";
  Status full = DiskFaultError(DiskFault::kFull, kDataDirPlace, path, "sqlite COMMIT: full");
  Status ro = DiskFaultError(DiskFault::kReadOnly, "gs://b/o", path, "read-only");
  SetDiskFaultReporter(nullptr);
  std::string message = full.message();
  message.erase(message.find(" ("), message.find(')') - message.find(" (") + 1);  // free space
  EXPECT_EQ(std::string(StatusCodeName(full.code())) + ": " + message + "\n" + ro.message() + "\n" +
                logged,
            "RESOURCE_EXHAUSTED: the server's data directory is full; nothing was stored: free "
            "space there and retry\n"
            // The temp dir is mounted read-write: a refusal there is the kernel's after an error.
            "gs://b/o is read-only (its file system turned read-only after an error); nothing was "
            "stored: stop the server, check the file system (fsck), mount it again and start the "
            "server\n"
            "read-only file system: " +
                path.string() + ": read-only");
  EXPECT_EQ(full.message().find(path.string()), std::string::npos);
}

}  // namespace
}  // namespace trainyard
