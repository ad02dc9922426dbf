// Helpers for tests only: run a built binary, make a temp dir, find build outputs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace trainyard::testing {

struct ProcessResult {
  int exit_code = -1;  // 128+signal when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv (argv[0] a path or a name in PATH) with `stdin_data` on its stdin, waits, and returns
// its exit code and output. `extra_env` entries "K=V" are added to the inherited environment.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& stdin_data = "",
                         const std::vector<std::string>& extra_env = {});

// Exit code of RunVenvPython when the project's venv is not there (ctest's SKIP_RETURN_CODE).
constexpr int kVenvMissing = 77;
// Runs <venv>/bin/python with `args` through scripts/venv-python.sh: the pinned PyPI packages of
// scripts/venv (scripts/python-venv.sh makes it). Without a current venv the exit code is
// kVenvMissing and `out` says why (GTEST_SKIP with it); where TRAINYARD_REQUIRE_PYPI=1 it is 1
// instead, so the test fails.
ProcessResult RunVenvPython(const std::vector<std::string>& args,
                            const std::string& stdin_data = "",
                            const std::vector<std::string>& extra_env = {});

// A child process running in the background with stdout/stderr redirected to files (so a test
// can watch its progress and signal it). Start returns -1 when fork fails.
struct BackgroundProcess {
  int pid = -1;
  std::filesystem::path out, err;  // its stdout and stderr
};
BackgroundProcess StartProcess(const std::vector<std::string>& argv,
                               const std::vector<std::string>& extra_env,
                               const std::filesystem::path& out, const std::filesystem::path& err);
// Waits for it (at most `timeout_s`, then SIGKILL) and returns its exit code (128+signal when
// killed by a signal).
int WaitProcess(const BackgroundProcess& process, double timeout_s = 600);
// Polls `path` until it contains `needle` (true) or `timeout_s` passes / the process ended
// without printing it (false).
bool WaitForText(const BackgroundProcess& process, const std::filesystem::path& path,
                 const std::string& needle, double timeout_s = 300);

// A TCP port on 127.0.0.1 that was free a moment ago (for MASTER_PORT, server ports).
int FreeTcpPort();

// A fresh empty directory $TMPDIR/trainyard_test_<uid>/<pid>/<Suite.Test>, named after the
// running gtest test: unique to this process, so concurrent runs of one test never share it.
// Roots of processes that are no longer running are removed on the first call.
std::filesystem::path MakeTestDir();

// <build>/tools/<name>: the built trainyard binaries.
std::filesystem::path ToolPath(const std::string& name);

// <source>/<relative>: fixtures and sample data (data/sample/...).
std::filesystem::path SourcePath(const std::string& relative);

std::string ReadFileOrDie(const std::filesystem::path& path);
void WriteFileOrDie(const std::filesystem::path& path, const std::string& content);

}  // namespace trainyard::testing
