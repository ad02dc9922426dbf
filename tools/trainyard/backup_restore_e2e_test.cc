// `trainyard admin backup` while the real server serves, `admin restore` into a fresh data dir, a
// server started there: every resource is back (issue 45). The server on 127.0.0.1 port 0 and
// the real CLI (e2e_harness.h).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <iostream>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class BackupRestoreE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    fs::create_directories(dir_ / "buckets/bkt/model");
    testing::WriteFileOrDie(dir_ / "buckets/bkt/model/config.json", "{}");
  }

  std::unique_ptr<ServerProcess> Start(const fs::path& data_dir) {
    std::vector<std::string> args = {"--executor", "local",  "--kill-grace-seconds",
                                     "1",          "--gpus", "0"};
    if (!HaveLocalExecutor()) args = {"--executor", "fake", "--fake-run-ms", "200"};
    std::string error;
    auto server = ServerProcess::Start(data_dir, args, &error, Env());
    EXPECT_NE(server, nullptr) << error;
    return server;
  }

  std::vector<std::string> Env() const {
    return {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()};
  }

  testing::ProcessResult Run(const ServerProcess& server, const std::vector<std::string>& args) {
    return Cli(server.endpoint(), args, Env());
  }

  // The resources a server on `data_dir` serves, in one line: job, its state and log line, the
  // model, the token's id.
  std::string Resources(const ServerProcess& server, const fs::path& data_dir,
                        const std::string& job) {
    auto described = Run(server, {"ai", "custom-jobs", "describe", job, "--format=value(state)"});
    auto logs = Run(server, {"ai", "custom-jobs", "stream-logs", job});
    auto models = Run(server, {"ai", "models", "list", "--format=value(displayName)"});
    auto tokens = Run(server, {"auth", "list-tokens", "--data-dir", data_dir.string()});
    const bool logged = logs.out.find("hello from the job") != std::string::npos ||
                        !HaveLocalExecutor();  // the fake executor runs nothing
    return job + " " + described.out + "logs " + (logged ? "ok" : "missing: " + logs.out) +
           " | models " + models.out + "| tokens " +
           (tokens.out.find(" p1 ") != std::string::npos ? "p1" : tokens.out + tokens.err);
  }

  fs::path dir_;
};

TEST_F(BackupRestoreE2ETest, ABackupTakenWhileServingRestoresEveryResource) {
  auto server = Start(dir_ / "data");
  ASSERT_NE(server, nullptr);
  auto token = Run(*server, {"auth", "create-token", "--data-dir", (dir_ / "data").string(),
                             "--project", "p1", "--role", "editor"});
  ASSERT_EQ(token.exit_code, 0) << token.err;
  auto created =
      Run(*server, {"ai", "custom-jobs", "create", "--display-name=kept",
                    "--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,"
                    "container-image-uri=local",
                    "--command=^|^sh|-c|echo hello from the job", "--format=value(name)"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string job = created.out.substr(0, created.out.find('\n'));
  WaitForJob(server->port(), job, {});
  auto model = Run(*server, {"ai", "models", "upload", "--display-name=kept-model",
                             "--artifact-uri=gs://bkt/model/", "--container-image-uri=img"});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  const std::string before = Resources(*server, dir_ / "data", job);

  const auto start = std::chrono::steady_clock::now();
  auto backup = Run(*server, {"admin", "backup", (dir_ / "backup").string(), "--data-dir",
                              (dir_ / "data").string()});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(backup.exit_code, 0) << backup.err;
  std::cout << backup.out << "(the whole command: " << seconds << " s)\n";
  // The data dir in use cannot be restored over, even with --force.
  auto in_use = Run(*server, {"admin", "restore", (dir_ / "backup").string(), "--data-dir",
                              (dir_ / "data").string(), "--force"});
  EXPECT_EQ(std::to_string(in_use.exit_code) + " " + in_use.err,
            "2 ERROR: (trainyard.admin.restore) FAILED_PRECONDITION: cannot restore: another "
            "trainyard server is using --data-dir " +
                (dir_ / "data").string() + "; stop it or choose another --data-dir\n");
  server.reset();  // SIGTERM

  auto restored = Cli("http://127.0.0.1:9", {"admin", "restore", (dir_ / "backup").string(),
                                             "--data-dir", (dir_ / "restored").string()});
  ASSERT_EQ(restored.exit_code, 0) << restored.err;
  std::cout << restored.out;
  auto again = Start(dir_ / "restored");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(Resources(*again, dir_ / "restored", job), before);
  EXPECT_EQ(before.substr(job.size()),
            " JOB_STATE_SUCCEEDED\nlogs ok | models kept-model\n| tokens p1")
      << (HaveLocalExecutor() ? "" : "fake executor");
}

}  // namespace
}  // namespace trainyard::e2e
