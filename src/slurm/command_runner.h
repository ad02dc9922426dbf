// CommandRunner: how the Slurm client reaches the Slurm command-line tools (sbatch, squeue,
// sacct, scancel, sinfo). Behind an interface so tests hand the client canned outputs
// (STYLE.md §3); the real one runs the program and captures its output.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::slurm {

struct CommandResult {
  int exit_code = -1;  // 128+signal when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv (argv[0] looked up in PATH) with stdin from /dev/null and the caller's environment,
  // waits at most `timeout` (then SIGKILL). Returns the result whatever the exit code;
  // UNAVAILABLE only when the program cannot be started (e.g. not installed) or timed out.
  // Thread-safe.
  virtual StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                                      std::chrono::milliseconds timeout) = 0;
  static CommandRunner& Real();
};

}  // namespace trainyard::slurm
