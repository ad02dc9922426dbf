// CommandRunner: how Trainyard runs the command-line tools it drives (podman for src/container,
// sbatch/squeue/sacct/scancel/sinfo for src/slurm). Behind an interface so unit tests script the
// tools' answers (e.g. container/fake_command_runner.h) and check the exact arguments
// (STYLE.md §3). Every call has a timeout: a tool that hangs never hangs the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard {

struct CommandResult {
  int exit_code = -1;  // 128+signal when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// The last line of `output` that is not blank: a tool's error after the warnings printed before
// it (podman's stderr); "" when there is none.
std::string LastNonEmptyLine(const std::string& output);

// A program started in the background (CommandRunner::Start).
class BackgroundCommand {
 public:
  virtual ~BackgroundCommand() = default;
  // True once it has exited (and was reaped).
  virtual bool Done() = 0;
  // Waits up to `timeout` for it to exit; true if it did.
  virtual bool Wait(std::chrono::milliseconds timeout) = 0;
  // SIGTERM (then SIGKILL after a second) if it still runs; returns once it is reaped.
  virtual void Terminate() = 0;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv (argv[0] looked up in PATH) with stdin from /dev/null and the caller's environment,
  // waits at most `timeout` (then SIGKILL). Each complete stderr line is also passed to
  // `stderr_line` as it arrives (may be empty). Returns the result whatever the exit code;
  // UNAVAILABLE when the program cannot be started (e.g. not installed), DEADLINE_EXCEEDED when
  // it timed out (the message names the program and the limit). Thread-safe.
  virtual StatusOr<CommandResult> Run(
      const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
      const std::function<void(std::string_view)>& stderr_line = nullptr) = 0;

  // Starts argv in the background with stdout and stderr appended to `output_file` (created if
  // missing). UNAVAILABLE when it cannot be started or the file cannot be opened. Thread-safe.
  virtual StatusOr<std::unique_ptr<BackgroundCommand>> Start(
      const std::vector<std::string>& argv, const std::filesystem::path& output_file) = 0;

  static CommandRunner& Real();
};

}  // namespace trainyard
