#include "common/beneath.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

namespace trainyard {
namespace {
namespace fs = std::filesystem;

// The names in `dir`, sorted, ';'-separated.
std::string ListDir(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ";") + n;
  return out;
}

fs::path MakeTempDir() {
  std::string tmpl = (fs::temp_directory_path() / "beneath-test-XXXXXX").string();
  return ::mkdtemp(tmpl.data());
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every case runs twice: with openat2 and with the openat(O_NOFOLLOW) walk of older kernels.
class BeneathTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    BeneathDir::ForceWalkForTesting(GetParam());
    base_ = MakeTempDir();
    fs::create_directories(base_ / "root" / "dir");
    fs::create_directories(base_ / "outside");
    std::ofstream(base_ / "outside" / "secret") << "secret";
    std::ofstream(base_ / "root" / "dir" / "file") << "inside";
    dir_ = std::move(BeneathDir::Open(base_ / "root").value());
  }
  void TearDown() override {
    BeneathDir::ForceWalkForTesting(false);
    fs::remove_all(base_);
  }
  void Link(const fs::path& target, const std::string& rel) {
    fs::create_symlink(target, base_ / "root" / rel);
  }
  fs::path base_;
  BeneathDir dir_;
};

TEST_P(BeneathTest, ReadsFilesBeneath) {
  EXPECT_EQ(dir_.ReadFile("dir/file", 100).value(), "inside");
}

TEST_P(BeneathTest, NeverFollowsALinkAtTheEnd) {
  Link(base_ / "outside" / "secret", "dir/shadow");
  auto r = dir_.ReadFile("dir/shadow", 100);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
}

TEST_P(BeneathTest, NeverFollowsALinkOnTheWay) {
  Link(base_ / "outside", "srv");
  EXPECT_EQ(dir_.ReadFile("srv/secret", 100).status().code(), StatusCode::kFailedPrecondition);
  // A relative link that stays beneath is refused too: links are never followed.
  Link("dir", "alias");
  EXPECT_EQ(dir_.ReadFile("alias/file", 100).status().code(), StatusCode::kFailedPrecondition);
}

TEST_P(BeneathTest, RefusesNamesThatLeave) {
  for (const char* name : {"../outside/secret", "/etc/passwd", "dir/../../outside/secret",
                           "dir//file", "dir/./file", "dir/file/", ""}) {
    EXPECT_EQ(dir_.OpenFile(name, O_RDONLY).status().code(), StatusCode::kInvalidArgument) << name;
  }
}

TEST_P(BeneathTest, CreatingThroughALinkWritesNothingOutside) {
  Link(base_ / "outside", "out");
  Link(base_ / "outside" / "new-file", "dangling");
  EXPECT_FALSE(dir_.OpenFile("out/planted", O_WRONLY | O_CREAT, 0644).ok());
  EXPECT_FALSE(dir_.OpenFile("dangling", O_WRONLY | O_CREAT, 0644).ok());
  EXPECT_FALSE(dir_.ReplaceFile("out/planted", "x", false).ok());
  EXPECT_FALSE(dir_.MakeDirs("out/a/b", 0755).ok());
  EXPECT_EQ(ListDir(base_ / "outside"), "secret");
}

TEST_P(BeneathTest, OpenRegularDoesNotBlockOnAFifo) {
  ASSERT_EQ(::mkfifo((base_ / "root" / "fifo").c_str(), 0644), 0);
  auto r = dir_.OpenRegular("fifo");  // a blocking open would hang here
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(dir_.OpenRegular("dir").status().code(), StatusCode::kNotFound);
}

TEST_P(BeneathTest, MakeDirsReportsWhatItMade) {
  std::string made;
  auto d = dir_.MakeDirs("dir/a/b", 0700, [&](int fd, const std::string& rel) {
    struct stat st {};
    ::fstat(fd, &st);
    made += rel + (S_ISDIR(st.st_mode) ? ";" : "?");
    return Status::Ok();
  });
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(made, "dir/a;dir/a/b;");
  EXPECT_TRUE(fs::is_directory(base_ / "root" / "dir" / "a" / "b"));
  EXPECT_EQ(dir_.MakeDirs("dir/file/x", 0700).status().code(), StatusCode::kFailedPrecondition);
}

TEST_P(BeneathTest, RemoveAllRemovesLinksNotTheirTargets) {
  fs::create_directories(base_ / "root" / "tree" / "a" / "b");
  std::ofstream(base_ / "root" / "tree" / "a" / "b" / "f") << "x";
  fs::create_symlink(base_ / "outside", base_ / "root" / "tree" / "a" / "to-outside");
  fs::create_symlink(base_ / "outside" / "secret", base_ / "root" / "tree" / "secret");
  ASSERT_TRUE(dir_.RemoveAll("tree").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(base_ / "root" / "tree")));
  EXPECT_EQ(Slurp(base_ / "outside" / "secret"), "secret");
  // The tree itself a link: the link goes, its target stays.
  Link(base_ / "outside", "gone");
  ASSERT_TRUE(dir_.RemoveAll("gone").ok());
  EXPECT_EQ(ListDir(base_ / "outside"), "secret");
  EXPECT_TRUE(dir_.RemoveAll("never-was").ok());
}

TEST_P(BeneathTest, UnlinkAndRenameActOnTheLinkItself) {
  Link(base_ / "outside" / "secret", "dir/victim");
  ASSERT_TRUE(dir_.ReplaceFile("dir/staged", "new", false).ok());
  ASSERT_TRUE(dir_.Rename("dir/staged", dir_, "dir/victim").ok());
  EXPECT_EQ(dir_.ReadFile("dir/victim", 100).value(), "new");
  EXPECT_EQ(Slurp(base_ / "outside" / "secret"), "secret");
  Link(base_ / "outside" / "secret", "dir/victim2");
  ASSERT_TRUE(dir_.Unlink("dir/victim2").ok());
  EXPECT_EQ(Slurp(base_ / "outside" / "secret"), "secret");
  EXPECT_EQ(dir_.Unlink("dir").code(), StatusCode::kFailedPrecondition);
}

TEST_P(BeneathTest, ListAndStatDescribeLinksAsLinks) {
  Link(base_ / "outside", "dir/srv");
  std::string listed;
  const std::vector<BeneathDir::Entry> entries = dir_.List("dir").value();
  for (const auto& e : entries) {
    listed += e.name + (e.type == S_IFLNK ? "@" : e.type == S_IFREG ? "" : "?") + ";";
  }
  EXPECT_TRUE(listed == "file;srv@;" || listed == "srv@;file;") << listed;
  EXPECT_TRUE(S_ISLNK(dir_.Stat("dir/srv").value().st_mode));
  EXPECT_EQ(dir_.List("dir/srv").status().code(), StatusCode::kFailedPrecondition);
}

TEST_P(BeneathTest, ErrorsNameTheRelativeNameOnly) {
  auto r = dir_.ReadFile("dir/missing", 100);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message().find(base_.string()), std::string::npos) << r.status().message();
}

TEST_P(BeneathTest, ReadFileRefusesLargeFiles) {
  EXPECT_EQ(dir_.ReadFile("dir/file", 3).status().code(), StatusCode::kFailedPrecondition);
}

INSTANTIATE_TEST_SUITE_P(Resolvers, BeneathTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Walk" : "Openat2"; });

TEST(ValidateBeneathNameTest, Rules) {
  EXPECT_TRUE(ValidateBeneathName("a/b.c/d", false).ok());
  EXPECT_TRUE(ValidateBeneathName("", true).ok());
  EXPECT_FALSE(ValidateBeneathName("", false).ok());
  EXPECT_FALSE(ValidateBeneathName(std::string("a\0b", 3), false).ok());
  EXPECT_FALSE(ValidateBeneathName("a/..", false).ok());
}

}  // namespace
}  // namespace trainyard
