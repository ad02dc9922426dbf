// HostProcessRuntime: the ReplicaRuntime (replica_runtime.h) that runs a replica's command as a
// process on this host under trainyard-exec-wrapper (exec_wrapper.h), which keeps the contract:
// it starts the command in its own process group, writes the job log, the pid file and the
// status file, forwards SIGTERM and kills the group's leftovers when the replica exits.
//
// Start() launches `trainyard-exec-wrapper ... -- argv` in a new session through ProcessOps (so
// tests can inject fake processes); RunInForeground() becomes the wrapper in this process (the
// Slurm task launcher). Also here: the wrapper binary lookup and the pid/status file readers.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "executor/replica_runtime.h"

namespace trainyard::executor {

// The wrapper binary: `configured` if set (NOT_FOUND if not executable), else
// $TRAINYARD_EXEC_WRAPPER, next to /proc/self/exe, the build tree, then PATH; NOT_FOUND naming
// what was tried otherwise.
StatusOr<std::filesystem::path> FindExecWrapper(const std::filesystem::path& configured);

// Reads a wrapper's pid file. NOT_FOUND while not written yet, DATA_LOSS if corrupt. (Its status
// file: replica_status_file.h.)
StatusOr<ProcessId> ReadPidFile(const std::filesystem::path& path);

// The wrapper's command line for `launch` after the program name (--log-dir ... -- argv).
std::vector<std::string> ExecWrapperArgs(const ReplicaLaunch& launch);

class HostProcessRuntime : public ReplicaRuntime {
 public:
  // `wrapper_path`: as FindExecWrapper's `configured`. `ops`: nullptr = ProcessOps::Real().
  explicit HostProcessRuntime(std::filesystem::path wrapper_path = {}, ProcessOps* ops = nullptr);

  std::string Name() const override { return "host"; }
  Status CheckAvailable() const override;
  StatusOr<ReplicaHandle> Start(const ReplicaLaunch& launch) override;
  int RunInForeground(const ReplicaLaunch& launch) override;
  ReplicaObservation Observe(ReplicaHandle* handle) override;
  bool Terminate(const ReplicaHandle& handle) override;
  bool Kill(const ReplicaHandle& handle) override;
  StatusOr<int> OpenExitFd(const ReplicaHandle& handle) override;
  bool Reap(const ReplicaHandle& handle) override;

 private:
  std::filesystem::path wrapper_path_;
  ProcessOps& ops_;
};

}  // namespace trainyard::executor
