#include "executor/run_as.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testing/test_util.h"

namespace trainyard::executor {
namespace {
namespace fs = std::filesystem;

RunAs Nobody() { return RunAs{"nobody", 65534, 65534, {}, "/nonexistent"}; }

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

TEST(RunAsJsonTest, RoundTripsAndNamesBadFields) {
  RunAs r{"alice", 1000, 100, {27, 44}, "/home/alice"};
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
