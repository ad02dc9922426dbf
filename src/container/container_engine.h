// ContainerEngine: how Trainyard runs one replica as an OCI container. PodmanEngine
// (podman_engine.h) is the real one; FakeContainerEngine (fake_container_engine.h) keeps
// containers in memory for executor tests.
//
// A replica's container is named from its job id, pool and replica index (ContainerName), so after
// a server restart an executor finds it again by name (Inspect) and keeps following it instead of
// starting a second one. Containers carry the labels kJobLabel/kPoolLabel/kReplicaLabel, so
// everything a job left behind is found by ListJob and removed by Remove.
//
// Inside the container the replica sees Vertex's container contract (docs/containers.md):
//   - the env given in ContainerSpec::env (the Vertex variables from executor/replica_env.h, plus
//     the user's env), with gs:// values of AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and
//     AIP_TENSORBOARD_LOG_DIR rewritten to /gcs/BUCKET/... (ContainerEnv);
//   - the bucket root bind-mounted at /gcs, so gs://B/x is /gcs/B/x (Vertex's Cloud Storage FUSE
//     path); TRAINYARD_BUCKET_ROOT=/gcs so Trainyard's own tools map gs:// the same way;
//   - the directory of CLOUD_ML_HP_METRIC_FILE bind-mounted at the same path, so the metric file
//     the trainer writes is the one the server reads;
//   - the host's network (MASTER_ADDR:MASTER_PORT reach other replicas as host processes would).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::container {

inline constexpr std::string_view kJobLabel = "trainyard.job";
inline constexpr std::string_view kPoolLabel = "trainyard.pool";
inline constexpr std::string_view kReplicaLabel = "trainyard.replica";
// Where the bucket root appears inside every container (Vertex's Cloud Storage FUSE mount point).
inline constexpr std::string_view kGcsMountPoint = "/gcs";

// "trainyard-<job>-wp<pool>-<replica>". Characters podman does not allow in names
// ([a-zA-Z0-9][a-zA-Z0-9_.-]*) become '_' and an 8-hex-digit hash of the job id is appended,
// so distinct job ids never share a name.
std::string ContainerName(std::string_view job_id, int pool_index, int replica_index);

// `env` for inside a container that has the bucket root at /gcs: values of AIP_MODEL_DIR,
// AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR that are gs://B/x become /gcs/B/x;
// TRAINYARD_BUCKET_ROOT becomes /gcs. Everything else is unchanged. PodmanEngine applies it when
// ContainerSpec::bucket_root is set.
std::map<std::string, std::string> ContainerEnv(std::map<std::string, std::string> env);

// Called once per line (without its newline) of podman's progress output while pulling.
using LineSink = std::function<void(std::string_view line)>;

enum class PullPolicy {
  kAlways,   // pull every time (what Vertex does; a moved tag is seen)
  kMissing,  // pull only when the image is not in local storage
};

struct ContainerSpec {
  std::string name;   // ContainerName(...)
  std::string image;  // a fully qualified reference (ImageResolver::Resolve), already pulled
  std::string job_id;
  int pool_index = 0;
  int replica_index = 0;
  // containerSpec.command: replaces the image's ENTRYPOINT (and with it the image's CMD, as
  // Docker and Kubernetes do); unset keeps the image's ENTRYPOINT.
  std::optional<std::vector<std::string>> command;
  // containerSpec.args: replaces the image's CMD; unset keeps it (unless command is set).
  std::optional<std::vector<std::string>> args;
  // Variables set in the container on top of the image's ENV. Give the Vertex and user variables
  // only, not the server's own environment (the host's PATH or HOME would break the image).
  std::map<std::string, std::string> env;
  std::filesystem::path bucket_root;     // mounted at /gcs; empty: no /gcs mount
  std::filesystem::path hp_metric_file;  // its directory is mounted at the same path; may be empty
  std::vector<std::filesystem::path> extra_mounts;  // read-write, same path inside (e.g. job dir)
  std::vector<std::filesystem::path> read_only_mounts;  // read-only, same path inside
  double cpus = 0;                                      // CPU limit (--cpus); 0: none
  int64_t memory_bytes = 0;  // memory limit (--memory, no swap beyond it); 0: none
  std::vector<int> gpus;     // host GPU indices this replica gets
  // The host identity the entrypoint runs as (--user UID:GID, --group-add per supplementary
  // group); unset keeps the image's USER. Rootful podman maps ids 1:1, so files the replica
  // writes under /gcs are owned by that host user.
  std::optional<uint32_t> uid, gid;
  std::vector<uint32_t> groups;
  // An existing container with the same name is removed first (podman run --replace): the
  // executor passes true when it starts a fresh attempt (retry, gang restart).
  bool replace_existing = false;
  // Where conmon writes the k8s-file log (--log-opt path=) and its own pid (--conmon-pidfile);
  // empty: podman's defaults. trainyard-container-run follows the log there and watches conmon.
  std::filesystem::path log_path;
  std::filesystem::path conmon_pidfile;
};

enum class ContainerStatus { kMissing, kCreated, kRunning, kExited };

struct ContainerState {
  ContainerStatus status = ContainerStatus::kMissing;
  int exit_code = -1;       // when kExited: the entrypoint's code, 128+N when killed by signal N
  bool oom_killed = false;  // the kernel's OOM killer ended it (exit_code is then 137)
  int64_t pid = 0;          // PID 1 of the container on the host while running (rootful), else 0
  int64_t conmon_pid = 0;   // the monitor process; it exits when the container does
  std::string started_at;   // RFC 3339, as podman reports it; empty if never started
  std::string finished_at;  // RFC 3339; empty while running
  std::string id;           // podman's container id ("" when unknown)
};

// A background process following a container's output (ContainerEngine::FollowLogs).
class LogFollower {
 public:
  virtual ~LogFollower() = default;
  // True once it has exited (the container exited and all its output was written).
  virtual bool Done() = 0;
  // Waits up to `timeout` for it to exit; true if it did.
  virtual bool Wait(std::chrono::milliseconds timeout) = 0;
  // Stops following (the container keeps running).
  virtual void Stop() = 0;
};

class ContainerEngine {
 public:
  virtual ~ContainerEngine() = default;

  // Makes `image` (a fully qualified reference) available locally, reporting podman's progress
  // lines to `progress` (may be null). Errors name the image: NOT_FOUND (no such repository or
  // tag), UNAVAILABLE (registry unreachable), PERMISSION_DENIED (authentication),
  // FAILED_PRECONDITION (an HTTP registry not marked insecure), DEADLINE_EXCEEDED (pull took longer
  // than allowed).
  virtual Status Pull(const std::string& image, PullPolicy policy, const LineSink& progress) = 0;

  // Creates and starts the container, detached. INVALID_ARGUMENT for a spec that cannot run (no
  // name or image), FAILED_PRECONDITION when GPUs were asked for but cannot be passed in (the
  // message says why), ALREADY_EXISTS when a container of that name exists and
  // !replace_existing, another code with podman's message when podman refuses.
  virtual Status Run(const ContainerSpec& spec) = 0;

  // The container's state; kMissing (not an error) when there is none of that name.
  virtual StatusOr<ContainerState> Inspect(const std::string& name) = 0;

  // Sends `signal` to the container's PID 1 (podman kill --signal). OK also when the container is
  // not running (nothing to signal); NOT_FOUND when there is no container of that name.
  virtual Status Signal(const std::string& name, int signal) = 0;

  // SIGTERM, then SIGKILL if it still runs after `grace`; returns when it has exited (or after
  // grace plus the engine's command timeout, with DEADLINE_EXCEEDED). OK if it was not running.
  virtual Status Stop(const std::string& name, std::chrono::milliseconds grace) = 0;

  // Blocks until the container exits or `timeout` passes (DEADLINE_EXCEEDED); returns its state.
  virtual StatusOr<ContainerState> Wait(const std::string& name,
                                        std::chrono::milliseconds timeout) = 0;

  // Appends the container's stdout and stderr, from its start (or from `since`, an RFC 3339 time,
  // when resuming after a server restart), to `output_file` until the container exits.
  virtual StatusOr<std::unique_ptr<LogFollower>> FollowLogs(
      const std::string& name, const std::filesystem::path& output_file,
      const std::string& since) = 0;

  // Removes the container (killing it if it runs) and what it mounted. OK when already gone.
  virtual Status Remove(const std::string& name) = 0;

  // Names of every container of the job (any state), from the job label.
  virtual StatusOr<std::vector<std::string>> ListJob(const std::string& job_id) = 0;
};

}  // namespace trainyard::container
