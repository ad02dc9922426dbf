#include "train/output_check.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "testing/test_util.h"
#include "train/train_paths.h"

namespace trainyard::train {
namespace {
namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

// Runs `check` as an unprivileged user: in this process when it is not root, else in a child
// switched to uid/gid 65534 (root passes every permission check). "OK", or "CODE: message".
std::string Unprivileged(const std::function<Status()>& check) {
  if (::geteuid() != 0) return check().ToString();
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    std::string out = "cannot switch to uid 65534";
    if (::setgroups(0, nullptr) == 0 && ::setgid(kNobody) == 0 && ::setuid(kNobody) == 0) {
      out = check().ToString();
    }
    ssize_t ignored = ::write(pipe_fds[1], out.data(), out.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

// A directory the unprivileged user can enter but not write.
fs::path Locked(const fs::path& dir) {
  fs::create_directories(dir / "locked");
  ::chmod((dir / "locked").c_str(), 0555);
  return dir / "locked";
}

TEST(OutputCheckTest, AnExportDirWhoseParentItCannotWriteNamesTheParentAndTheFix) {
  const fs::path locked = Locked(testing::MakeTestDir());
  const std::string got =
      Unprivileged([&] { return CheckExportDir("--job-dir", locked / "model/"); });
  for (const std::string& part :
       {"FAILED_PRECONDITION: --job-dir " + (locked / "model").string() +
            ": cannot create directory " + (locked / "model").string() + ".tmp.",
        "Permission denied; " + locked.string() + " is owned by ", std::string(", mode 0555, "),
        std::string("and this process runs as "), std::string("Fix: let uid "),
        std::string("or pass another --job-dir")}) {
    EXPECT_NE(got.find(part), std::string::npos) << part << "\nin: " << got;
  }
}

TEST(OutputCheckTest, AWritableExportDirLeavesOnlyItsParentsBehind) {
  const fs::path dir = testing::MakeTestDir();
  ASSERT_TRUE(CheckExportDir("--job-dir", dir / "out" / "model").ok());
  fs::create_directories(dir / "out" / "model");  // a previous export, this user's: replaceable
  ASSERT_TRUE(CheckExportDir("--job-dir", dir / "out" / "model").ok());
  std::string left;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    left += fs::relative(e.path(), dir).string() + " ";
  }
  EXPECT_EQ(left, "out out/model ");
}

TEST(OutputCheckTest, APreviousExportAnotherUserOwnsInAStickyDirCannotBeReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (a directory owned by another user)";
  const fs::path sticky = testing::MakeTestDir() / "tmp";
  fs::create_directories(sticky / "model");
  ::chmod(sticky.c_str(), 01777);
  const std::string got =
      Unprivileged([&] { return CheckExportDir("--job-dir", sticky / "model"); });
  EXPECT_NE(got.find("--job-dir " + (sticky / "model").string() +
                     ": the export replaces it, but it is owned by root:"),
            std::string::npos)
      << got;
  EXPECT_NE(got.find("in the sticky directory " + sticky.string()), std::string::npos) << got;
}

TEST(OutputCheckTest, CheckpointAndTensorBoardDirsAreMadeOrNamed) {
  const fs::path dir = testing::MakeTestDir();
  ASSERT_TRUE(CheckOutputDir("--checkpoint-dir", dir / "ckpt/").ok());
  EXPECT_TRUE(fs::is_directory(dir / "ckpt"));
  EXPECT_TRUE(fs::is_empty(dir / "ckpt"));
  const fs::path locked = Locked(dir);
  const std::string got =
      Unprivileged([&] { return CheckOutputDir("--tensorboard-dir", locked / "tb"); });
  EXPECT_TRUE(got.starts_with("FAILED_PRECONDITION: --tensorboard-dir " + (locked / "tb").string() +
                              ": cannot create directory " + (locked / "tb").string()))
      << got;
  EXPECT_NE(got.find(locked.string() + " is owned by "), std::string::npos) << got;
}

}  // namespace
}  // namespace trainyard::train

namespace trainyard::train {
namespace {

// The article's flags put TensorBoard inside the export dir: that entry is the export's to keep.
TEST(TrainPathsTest, TheTensorBoardEntryInsideTheJobDirIsNamed) {
  const fs::path dir = testing::MakeTestDir();
  std::string got;
  for (const auto& [job, tensorboard] :
       std::vector<std::pair<fs::path, fs::path>>{{dir / "model", dir / "model/logs"},
                                                  {dir / "model", dir / "model/tb/run1"},
                                                  {dir / "model", dir / "logs"},
                                                  {dir / "model", dir / "model"},
                                                  {dir / "model", ""}}) {
    TrainPaths p;
    p.job_dir = job;
    p.tensorboard_dir = tensorboard;
    got += "[" + TensorBoardEntryInJobDir(p) + "]";
  }
  EXPECT_EQ(got, "[logs][tb][][][]");
}

}  // namespace
}  // namespace trainyard::train
