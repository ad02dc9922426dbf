// End-to-end test harness: the real `trainyard` binary as server (127.0.0.1, port 0, temp data
// dir) and as CLI, plus raw HTTP (STYLE.md §9).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/test_util.h"

namespace trainyard::e2e {

// "local" when the binary has the LocalExecutor, else "fake".
std::string DefaultExecutor();
bool HaveLocalExecutor();
// Why the tests that need a Slurm cluster cannot run here (with how to start one), or "" when
// `sinfo` answers with an idle node.
std::string SlurmSkipReason();

class ServerProcess {
 public:
  // Starts `trainyard server --port 0 --data-dir <data_dir> <extra_args>` and waits (10 s) for its
  // "listening on" line. Returns nullptr (with the server's stderr in *error) on failure.
  // `allow_root_replicas` adds --allow-root-replicas when the tests run as root: their jobs run
  // the build tree's binaries, which a clone under a private home (/root) does not let `nobody`
  // execute. security_e2e_test passes false to test the unprivileged default.
  static std::unique_ptr<ServerProcess> Start(const std::filesystem::path& data_dir,
                                              const std::vector<std::string>& extra_args,
                                              std::string* error,
                                              const std::vector<std::string>& extra_env = {},
                                              bool allow_root_replicas = true);
  ~ServerProcess();  // SIGTERM, then waits

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Sends `sig` and reaps the process.
  void Kill(int sig);
  // Sends `sig` and returns (a signal the server answers without exiting: SIGHUP).
  void Signal(int sig);
  std::string Stderr() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::filesystem::path stderr_path_;
};

struct HttpResult {
  int status = -1;
  nlohmann::json body;
};
HttpResult Http(int port, const std::string& method, const std::string& path,
                const std::string& body = "");

// Runs `trainyard <args>` against `endpoint` (TRAINYARD_ENDPOINT).
testing::ProcessResult Cli(const std::string& endpoint, const std::vector<std::string>& args,
                           const std::vector<std::string>& extra_env = {});

// Kills (SIGKILL, their process groups) the replicas a server on `data_dir` left running: by
// design they outlive a stopped server, which re-adopts them when it starts again. For a test's
// TearDown once its server is gone (serving replicas run until undeployed). Each running replica
// has jobs/J/replicas/T/attempt-N.pid ({"pid", "start_ticks"}) and no attempt-N.status; a pid
// whose start time differs (reused) is left alone. The cgroups of the server's jobs
// (trainyard-<job>-...) are removed too: a supervisor killed this way cannot remove them.
void EndReplicas(const std::filesystem::path& data_dir);

// Polls GET until the job's state is one of `states` (or terminal when empty); returns the job
// (its last version on timeout).
nlohmann::json WaitForJob(int port, const std::string& name, std::vector<std::string> states,
                          int timeout_s = 60);

}  // namespace trainyard::e2e
