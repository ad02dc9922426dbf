// ReplicaRuntime: what runs one attempt of one replica on a machine — the seam between executors
// (which decide when a replica starts, restarts and stops: gang_lifecycle.h) and the thing that
// actually runs it. HostProcessRuntime (host_process_runtime.h) runs the command as a host
// process under trainyard-exec-wrapper; a container runtime (container::PodmanReplicaRuntime,
// which executors receive from the server and never include) runs the replica's image instead.
// The LocalExecutor starts replicas with Start(); the Slurm executor's per-task launcher
// (trainyard-slurm-task, under srun) with RunInForeground(). A new runtime plugs in once for both.
//
// The contract every runtime keeps (the executors rely on it):
// - The attempt is supervised by something that outlives the server: stdout/stderr go, line by
//   line and timestamped, to the job log at `log_dir` (job_log.h); the replica's identity goes to
//   `pid_file` ({"pid":N,"start_ticks":T}) once it runs, and its exit code to `status_file`
//   ({"exit_code":N,"end_time":"..."}, 128+signal when killed, 127 when it cannot execute),
//   both written atomically. Exit codes are learnt only from that file, so they survive a
//   kill -9 of the server and a new server re-adopts the attempt from the persisted handle.
// - Terminate() asks the replica to stop (SIGTERM to its PID 1 / process group, so its handlers
//   run); Kill() ends it and everything it started.
// - When the replica's main process exits, whatever it left running is killed.
//
// Thread-safety: implementations are safe to call from one executor thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"
#include "executor/job_log.h"
#include "executor/process_ops.h"

namespace trainyard::executor {

// One attempt of one replica, fully resolved by the executor.
struct ReplicaLaunch {
  int pool_index = 0;
  int replica_index = 0;
  std::vector<std::string> argv;           // the replica's command (ReplicaSpec::argv)
  std::map<std::string, std::string> env;  // its complete environment (replica_env.h)
  std::filesystem::path work_dir;          // its cwd; exists
  std::filesystem::path log_dir;           // the job log it writes (job_log.h)
  LogLimits log_limits;
  std::filesystem::path pid_file, status_file;  // see the contract above
  std::filesystem::path output_file;            // the supervisor's own stdout/stderr (Start only)
  std::vector<int> cpus;                        // pin to these CPU ids; empty = not pinned
  std::filesystem::path cgroup;                 // join this cgroup directory; empty = none
  // cgroup v1: the replica's cgroups in the other hierarchies (cpu), joined as well.
  std::vector<std::filesystem::path> extra_cgroups;
  // The cgroups the replica's supervisor joins first (delegated mode); empty = it stays put.
  std::vector<std::filesystem::path> supervisor_cgroups;
  std::optional<RunAs> run_as;  // run the replica as this user; unset = the supervisor's user

  // For runtimes that run an image (ReplicaSpec::image set); host processes ignore these.
  std::string job_id;
  std::string image;                                      // as the job named it
  std::string image_field;                                // "containerSpec.imageUri", for messages
  std::optional<std::vector<std::string>> command, args;  // ENTRYPOINT / CMD overrides
  std::vector<std::string> mounts;  // host paths it sees at the same path (ReplicaSpec::mounts)
  // Host paths it sees read-only at the same path (pip's configuration: package_index.h).
  std::vector<std::string> read_only_mounts;
  std::filesystem::path hp_metric_file;  // CLOUD_ML_HP_METRIC_FILE (its directory is shared)
  double cpu_limit = 0;                  // the machine type's vCPUs; 0 = none
  int64_t memory_bytes = 0;              // its memory; 0 = none
  std::vector<int> gpus;                 // host GPU indices of this replica
};

// A started attempt, as the executor persists it to re-adopt it after a restart.
struct ReplicaHandle {
  ProcessId supervisor;  // what Start() launched (the wrapper); invalid for foreground runs
  ProcessId process;     // the replica itself, once its pid file is read
  std::filesystem::path pid_file, status_file;
  std::string container;  // the replica's container name (container runtimes); empty otherwise
};

// What Observe() saw.
struct ReplicaObservation {
  enum class Phase { kRunning, kExited, kLost };
  Phase phase = Phase::kRunning;
  int exit_code = 0;        // kExited
  std::string lost_reason;  // kLost: ended without a recorded exit code, and why
  // kLost: why, for machines. kImageUnavailable when the replica's image could not be pulled or
  // run (no restart fixes that); kReplicaLost otherwise.
  GangFailure failure = GangFailure::kReplicaLost;
  // kExited: when it ended, from the status file's end_time; unset when the file has none.
  std::optional<std::chrono::system_clock::time_point> end_time;
};

class ReplicaRuntime {
 public:
  virtual ~ReplicaRuntime() = default;
  // "host", "podman", ...: for logs and messages.
  virtual std::string Name() const = 0;
  // OK when replicas can be started; FAILED_PRECONDITION naming what is missing and the fix
  // (e.g. the wrapper binary) otherwise. Executors refuse jobs with it before queueing them.
  virtual Status CheckAvailable() const = 0;
  // Checks, without side effects, that `image` (ReplicaSpec::image) can be named to this runtime:
  // INVALID_ARGUMENT starting with `field` for a malformed reference, FAILED_PRECONDITION when
  // the runtime cannot run images at all. Runtimes without images (host processes) refuse every
  // image with FAILED_PRECONDITION.
  virtual Status CheckImage(const std::string& image, const std::string& field) const {
    return FailedPreconditionError(field + ": the " + Name() + " runtime cannot run image '" +
                                   image + "'");
  }
  // Starts the attempt detached from the server. UNAVAILABLE (or the runtime's error) when it
  // cannot be started; nothing of it runs then.
  virtual StatusOr<ReplicaHandle> Start(const ReplicaLaunch& launch) = 0;
  // Runs the attempt in the calling process (which becomes its supervisor) and returns once it
  // ended and its status file is written: 0, or 2 on bad arguments / I/O failure (message on
  // stderr). For launchers that are themselves the task of a cluster scheduler.
  virtual int RunInForeground(const ReplicaLaunch& launch) = 0;
  // Looks at a started or re-adopted attempt; fills handle->process once the pid file exists.
  virtual ReplicaObservation Observe(ReplicaHandle* handle) = 0;
  // SIGTERM to the replica (through its supervisor where there is one). False if it is gone.
  virtual bool Terminate(const ReplicaHandle& handle) = 0;
  // SIGKILL to the replica and everything it started. False if it is gone.
  virtual bool Kill(const ReplicaHandle& handle) = 0;
  // An fd that becomes readable once the supervisor has exited (ProcessOps::OpenExitFd). NOT_FOUND
  // if it is already gone, UNIMPLEMENTED where it cannot be watched (the executor then polls).
  virtual StatusOr<int> OpenExitFd(const ReplicaHandle& handle) = 0;
  // Collects a supervisor this runtime started so it does not stay a zombie; true once nothing is
  // left to collect.
  virtual bool Reap(const ReplicaHandle& handle) = 0;
  // The attempt has ended and its end was recorded: removes what the runtime keeps for it (a
  // container). Idempotent; best effort (failures are the runtime's to log).
  virtual void Release(const ReplicaHandle& handle) { (void)handle; }
};

// A runtime that cannot start a replica (an image that cannot be pulled, a container that cannot
// be created) leaves a start-error file next to the launch's pid file:
// {"failure": "IMAGE_UNAVAILABLE" | "START_FAILED", "message": "..."}. Executors that see a
// replica only through its files (the Slurm executor, whose tasks run the runtime on their node)
// read it to fail the gang for that reason instead of by an exit code.
std::filesystem::path StartErrorFile(const std::filesystem::path& pid_file);
struct StartError {
  GangFailure failure = GangFailure::kStartFailed;
  std::string message;
};
// NOT_FOUND when there is no such file; DATA_LOSS when it is corrupt.
StatusOr<StartError> ReadStartError(const std::filesystem::path& pid_file);
// Writes it (atomically), for launchers that fail before any runtime starts (trainyard-slurm-task
// when the replica's directories cannot be prepared on its node).
Status WriteStartError(const std::filesystem::path& pid_file, const StartError& error);

}  // namespace trainyard::executor
