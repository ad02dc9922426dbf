#include "executor/run_as.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "testing/test_util.h"

namespace trainyard::executor {
namespace {
namespace fs = std::filesystem;

RunAs Nobody() { return RunAs{"nobody", 65534, 65534, {}, "/nonexistent", std::nullopt}; }

// "owner:group mode" of a directory, numerically.
std::string Owner(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "missing";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) + " " + mode;
}

TEST(CheckCanReachTest, NamesTheFirstDirectoryThatStopsTheUser) {
  const fs::path dir = testing::MakeTestDir();
  fs::create_directories(dir / "open" / "inner");
  fs::create_directories(dir / "private" / "inner");
  ::chmod((dir / "open").c_str(), 0755);
  ::chmod((dir / "private").c_str(), 0700);
  EXPECT_TRUE(CheckCanReach(dir / "open" / "inner", Nobody()).ok());
  Status s = CheckCanReach(dir / "private" / "inner", Nobody());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find((dir / "private").string() + " is mode 0700"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'nobody' (uid 65534)"), std::string::npos) << s;
  // Owner and group bits count for their owner and group.
  RunAs owner = Nobody();
  owner.uid = ::geteuid();
  EXPECT_TRUE(CheckCanReach(dir / "private" / "inner", owner).ok());
  ::chmod((dir / "private").c_str(), 0710);
  RunAs member = Nobody();
  member.groups = {static_cast<uint32_t>(::getegid())};
  EXPECT_TRUE(CheckCanReach(dir / "private" / "inner", member).ok());
  EXPECT_FALSE(CheckCanReach(dir / "private" / "inner", Nobody()).ok());
}

TEST(MakeReplicaDirTest, GivesTheLeafNotTheParentsToTheUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  const fs::path dir = testing::MakeTestDir();
  ASSERT_TRUE(MakeReplicaDir(dir / "bucket" / "out" / "model", Nobody()).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir / "bucket" / "out" / "model").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  ASSERT_EQ(::stat((dir / "bucket").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  // Another user's directory is left alone.
  fs::create_directories(dir / "theirs");
  ASSERT_EQ(::chown((dir / "theirs").c_str(), 1, 1), 0);
  ASSERT_TRUE(MakeReplicaDir(dir / "theirs", Nobody()).ok());
  ASSERT_EQ(::stat((dir / "theirs").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1u);
}

TEST(MakeReplicaDirTest, AWorkDirIsItsUsersAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  const fs::path dir = testing::MakeTestDir();
  ::umask(002);  // a root server sharing buckets runs with this umask
  ASSERT_TRUE(MakeReplicaDir(dir / "jobs" / "7" / "work" / "workerpool0-0", Nobody()).ok());
  EXPECT_EQ(Owner(dir / "jobs" / "7" / "work" / "workerpool0-0"), "65534:65534 0700");
  ::umask(022);
}

TEST(MakeReplicaDirTest, WithoutAUserItOnlyCreates) {
  const fs::path dir = testing::MakeTestDir();
  ASSERT_TRUE(MakeReplicaDir(dir / "a" / "b", std::nullopt).ok());
  EXPECT_TRUE(fs::is_directory(dir / "a" / "b"));
  testing::WriteFileOrDie(dir / "file", "x");
  Status s = MakeReplicaDir(dir / "file", Nobody());
  EXPECT_FALSE(s.ok());
}

TEST(PrepareReplicaDirsTest, MakesTheWorkMetricAndOutputDirs) {
  const fs::path dir = testing::MakeTestDir();
  ::setenv("TRAINYARD_BUCKET_ROOT", (dir / "buckets").c_str(), 1);
  fs::create_directories(dir / "buckets/bkt");
  ReplicaEnvInput in;
  in.base_output_dir = "gs://bkt/base";
  in.trial_id = "3";
  in.hp_metric_file = dir / "hp" / "metric.json";
  const std::optional<RunAs> who =
      ::geteuid() == 0 ? std::optional<RunAs>(Nobody()) : std::optional<RunAs>();
  ASSERT_TRUE(PrepareReplicaDirs(dir / "work", in, who).ok());
  EXPECT_TRUE(fs::is_directory(dir / "work"));
  EXPECT_TRUE(fs::is_directory(dir / "hp"));
  // Output dirs are made only for a replica of another user (one of the server's makes its own).
  EXPECT_EQ(fs::is_directory(dir / "buckets/bkt/base/3/model"), who.has_value());
  EXPECT_EQ(fs::is_directory(dir / "buckets/bkt/base/3/checkpoints"), who.has_value());
  ::unsetenv("TRAINYARD_BUCKET_ROOT");
}

// TRAINYARD_BUCKET_ROOT for one test.
class BucketRootForTest {
 public:
  explicit BucketRootForTest(const fs::path& root) {
    ::setenv("TRAINYARD_BUCKET_ROOT", root.c_str(), 1);
  }
  ~BucketRootForTest() { ::unsetenv("TRAINYARD_BUCKET_ROOT"); }
};

TEST(PrepareReplicaDirsTest, OutputDirsGetTheUserTheBucketGroupAndSetgid) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  const fs::path dir = testing::MakeTestDir();
  BucketRootForTest root(dir / "buckets");
  // A bucket made by hand, not through Trainyard: root's, 0755, no setgid, not the bucket group.
  fs::create_directories(dir / "buckets/bkt/data");
  ::chmod((dir / "buckets/bkt").c_str(), 0755);
  ReplicaEnvInput in;
  in.base_output_dir = "gs://bkt/out";
  in.trial_id = "3";
  RunAs who = Nobody();
  who.bucket_group = 4242;
  ASSERT_TRUE(PrepareReplicaDirs(dir / "work", in, who).ok());
  in.base_output_dir = "gs://bkt/runs/out";  // a folder above the base: the server's, shared
  ASSERT_TRUE(PrepareReplicaDirs(dir / "work", in, who).ok());
  in.base_output_dir = "gs://new-bkt/out";  // a bucket is never made: it is created explicitly
  Status missing = PrepareReplicaDirs(dir / "work", in, who);
  EXPECT_EQ(missing.code(), StatusCode::kFailedPrecondition) << missing;
  EXPECT_NE(missing.message().find("bucket 'new-bkt' of gs://new-bkt/out does not exist"),
            std::string::npos)
      << missing;
  EXPECT_FALSE(fs::exists(dir / "buckets/new-bkt"));
  std::string got;
  for (const char* d : {"bkt", "bkt/out", "bkt/out/3", "bkt/out/3/model", "bkt/out/3/checkpoints",
                        "bkt/out/3/logs", "bkt/runs", "bkt/runs/out/3/model"}) {
    got += std::string(d) + "=" + Owner(dir / "buckets" / d) + "\n";
  }
  EXPECT_EQ(got,
            "bkt=0:0 0755\n"
            "bkt/out=65534:4242 2775\n"
            "bkt/out/3=65534:4242 2775\n"
            "bkt/out/3/model=65534:4242 2775\n"
            "bkt/out/3/checkpoints=65534:4242 2775\n"
            "bkt/out/3/logs=65534:4242 2775\n"
            "bkt/runs=0:4242 2775\n"
            "bkt/runs/out/3/model=65534:4242 2775\n");
}

TEST(PrepareReplicaDirsTest, AnOutputDirTheUserCannotWriteFailsTheStart) {
  const fs::path dir = testing::MakeTestDir();
  BucketRootForTest root(dir / "buckets");
  fs::create_directories(dir / "buckets/bkt/out");
  ::chmod((dir / "buckets/bkt/out").c_str(), 0755);
  ReplicaEnvInput in;
  in.base_output_dir = "gs://bkt/out";
  Status s = PrepareReplicaDirs(dir / "work", in, Nobody());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  EXPECT_FALSE(fs::exists(dir / "buckets/bkt/out/model"));
}

TEST(PrepareReplicaDirsTest, ALinkAJobLeftInABucketIsNeverFollowed) {
  const fs::path dir = testing::MakeTestDir();
  BucketRootForTest root(dir / "buckets");
  fs::create_directories(dir / "buckets/bkt/out");
  fs::create_directories(dir / "outside");
  ::chmod((dir / "buckets/bkt").c_str(), 0777);
  ::chmod((dir / "buckets/bkt/out").c_str(), 0777);
  fs::create_symlink(dir / "outside", dir / "buckets/bkt/linked");
  fs::create_symlink(dir / "outside", dir / "buckets/bkt/out/3");
  ReplicaEnvInput in;
  for (auto [base, trial] : {std::pair{"gs://bkt/linked/x", ""}, std::pair{"gs://bkt/out", "3"}}) {
    in.base_output_dir = base;
    in.trial_id = trial;
    Status s = PrepareReplicaDirs(dir / "work", in, Nobody());
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << base;
    EXPECT_NE(s.message().find("symbolic link"), std::string::npos) << s;
    EXPECT_EQ(s.message().find(dir.string()), std::string::npos)
        << "names the server's path: " << s;
  }
  EXPECT_TRUE(fs::is_empty(dir / "outside"));
}

TEST(PrepareReplicaDirsTest, OutsideTheBucketRootTheServerMakesNothing) {
  const fs::path dir = testing::MakeTestDir();
  BucketRootForTest root(dir / "buckets");
  fs::create_directories(dir / "buckets");
  fs::create_directories(dir / "local");
  ::chmod((dir / "local").c_str(), 0777);
  ReplicaEnvInput in;
  in.base_output_dir = (dir / "local" / "out").string();
  ASSERT_TRUE(PrepareReplicaDirs(dir / "work", in, Nobody()).ok());
  EXPECT_TRUE(fs::is_empty(dir / "local"));  // the replica makes it, as its own user
}

TEST(CheckOutputDirsTest, NamesTheDirectoryItsOwnerModeAndTheFix) {
  const fs::path dir = testing::MakeTestDir();
  BucketRootForTest root(dir / "buckets");
  fs::create_directories(dir / "buckets/bkt/out/model");
  for (const char* d : {"bkt", "bkt/out", "bkt/out/model"})
    ::chmod((dir / "buckets" / d).c_str(), 0755);
  RunAs who = Nobody();
  who.bucket_group = 4242;
  Status s = CheckOutputDirs("gs://bkt/out", "", who);
  const std::string out = (dir / "buckets/bkt/out").string();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(
      s.message().starts_with("user 'nobody' (uid 65534), who runs this job's replicas, "
                              "cannot write " +
                              out + ": it is owned by "))
      << s;
  for (const std::string& part : {std::string("(uid ") + std::to_string(::geteuid()) + ", gid ",
                                  std::string("mode 0755"), std::string("chown nobody ") + out,
                                  std::string("chgrp 4242 ") + out + " && chmod 2775 " + out,
                                  std::string("another baseOutputDirectory")}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s;
  }
  // Writable through a group the user has (the bucket group), or as its owner: fine.
  for (const char* d : {"bkt/out", "bkt/out/model"}) ::chmod((dir / "buckets" / d).c_str(), 02775);
  RunAs member = who;
  member.groups = {static_cast<uint32_t>(::getegid())};
  EXPECT_TRUE(CheckOutputDirs("gs://bkt/out", "", member).ok());
  EXPECT_FALSE(CheckOutputDirs("gs://bkt/out", "", who).ok());
  RunAs owner = who;
  owner.uid = ::geteuid();
  EXPECT_TRUE(CheckOutputDirs("gs://bkt/out", "", owner).ok());
  // Directories not made yet are fine, below a bucket the user may pass through.
  EXPECT_TRUE(CheckOutputDirs("gs://bkt/new/deeper", "7", who).ok());
  // A bucket it cannot pass through is named with its mode.
  ::chmod((dir / "buckets/bkt").c_str(), 0700);
  s = CheckOutputDirs("gs://bkt/new", "", who);
  EXPECT_NE(s.message().find("cannot reach " + (dir / "buckets/bkt/new").string() + ": " +
                             (dir / "buckets/bkt").string() + " is owned by"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("mode 0700"), std::string::npos) << s;
}

TEST(ReplicaOutputDirsTest, BaseTrialAndTheAipDirsAsLocalPaths) {
  BucketRootForTest root("/b");
  auto dirs = ReplicaOutputDirs("gs://bkt/out/", "3");
  ASSERT_TRUE(dirs.ok()) << dirs.status();
  std::string got;
  for (const auto& d : *dirs) got += d.string() + " ";
  EXPECT_EQ(
      got,
      "/b/bkt/out /b/bkt/out/3 /b/bkt/out/3/model /b/bkt/out/3/checkpoints /b/bkt/out/3/logs ");
  EXPECT_TRUE(ReplicaOutputDirs("", "3")->empty());
}

TEST(RunAsJsonTest, RoundTripsAndNamesBadFields) {
  RunAs r{"alice", 1000, 100, {27, 44}, "/home/alice", 44};
  auto back = RunAsFromJson(RunAsToJson(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(RunAsToJson(*back), RunAsToJson(r));
  auto bad = RunAsFromJson(nlohmann::json{{"user", "x"}, {"uid", "zero"}, {"gid", 1}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("run_as"), std::string::npos);
  EXPECT_FALSE(RunAsFromJson(nlohmann::json::array()).ok());
}

TEST(ApplyIdentityEnvTest, SetsHomeUserAndLogname) {
  EnvMap env = {{"HOME", "/root"}, {"PATH", "/bin"}};
  ApplyIdentityEnv(std::nullopt, &env);
  EXPECT_EQ(env["HOME"], "/root");
  ApplyIdentityEnv(Nobody(), &env);
  EXPECT_EQ(env["HOME"], "/nonexistent");
  EXPECT_EQ(env["USER"], "nobody");
  EXPECT_EQ(env["LOGNAME"], "nobody");
  EXPECT_EQ(env["PATH"], "/bin");
}

}  // namespace
}  // namespace trainyard::executor
