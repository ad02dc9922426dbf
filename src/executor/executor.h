// Executor: runs the replicas of one job as a gang on some hardware (STYLE.md §2).
//
// This header is the contract between the control plane (api/, store/, the job controller) and
// the executors (LocalExecutor here; SlurmExecutor and FakeExecutor behind the same interface).
// The control plane turns a CustomJob into a GangSpec; the executor owns everything from there:
// admission against the host's inventory (gang, FIFO), port allocation, the Vertex environment of
// each replica (CLUSTER_SPEC, TF_CONFIG, MASTER_ADDR/PORT, WORLD_SIZE, RANK, LOCAL_RANK, AIP_*,
// CLOUD_ML_*), process groups, durable logs, timeout, cancel, retries, and re-adoption after a
// server restart. It reports every state change through the listener, never by being polled.
//
// Thread-safety: all methods are safe to call from any thread. Listener callbacks run on an
// executor-owned thread, never while the caller holds an executor lock; a callback may call back
// into the executor.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::executor {

// One replica's launch description. pool_index is the worker pool (0 = primary/chief,
// 1 = workers, 2 = parameter servers, 3 = evaluators); replica_index counts within the pool.
struct ReplicaSpec {
  int pool_index = 0;
  int replica_index = 0;
  std::string machine_type;      // e.g. "n1-standard-4"; resources come from the machine catalog
  std::string accelerator_type;  // e.g. "NVIDIA_TESLA_T4"; empty = none
  int accelerator_count = 0;
  std::vector<std::string> argv;           // resolved command + args; argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  // user env (containerSpec.env); platform env is added
  // The container image the replica runs in, as the job named it (containerSpec.imageUri); empty
  // = argv runs as a host command. With an image, argv is unused and command/args apply: command
  // replaces the image's ENTRYPOINT, args its CMD (unset = the image's own), as on Vertex.
  std::string image;
  // The job field that named it, for errors: "containerSpec.imageUri" or
  // "pythonPackageSpec.executorImageUri" (which runs `python3 -m MODULE ARGS` in the image).
  std::string image_field;
  std::optional<std::vector<std::string>> command;
  std::optional<std::vector<std::string>> args;
  std::vector<std::string> mounts;  // host paths the container sees at the same path
};

// The Unix identity a gang's replicas run as. The control plane resolves it from the job's
// serviceAccount (auth/replica_users.h); executors switch to it in the replica's process (host
// processes: setgroups/setgid/setuid after the fork; containers: --user) and give it the job's
// work and output directories. Unset = the server's own identity.
struct RunAs {
  std::string user;  // the Unix user name, for messages and $USER/$LOGNAME
  uint32_t uid = 0;
  uint32_t gid = 0;              // primary group
  std::vector<uint32_t> groups;  // supplementary groups (initgroups), primary excluded
  std::filesystem::path home;    // $HOME
  // The bucket group (the server's --bucket-group), also in `groups`: directories the executor
  // makes on the replica's output paths get it, setgid and group-writable (run_as.h). Unset: they
  // get the user's primary group.
  std::optional<uint32_t> bucket_group;
};

struct GangSpec {
  std::string job_id;    // unique; e.g. "1234"
  std::string job_name;  // "projects/p/locations/l/customJobs/1234"
  // The job's project ("p" above) and priority (spec/job_priority.h: 0..1000, higher first):
  // executors that queue order by them, fair share between projects and priority within one.
  std::string project;
  int priority = 0;
  // jobSpec.serviceAccount as the job named it ("" = none). run_as below is what it resolved to;
  // executors that map jobs to cluster accounts (the Slurm executor) key on it too.
  std::string service_account;
  std::filesystem::path job_dir;  // executor-owned: logs, work dirs, state files live here
  std::string base_output_dir;  // baseOutputDirectory.outputUriPrefix (gs:// or path); may be empty
  std::vector<ReplicaSpec> replicas;             // all pools, pool 0 first
  std::optional<std::chrono::seconds> timeout;   // scheduling.timeout
  std::chrono::seconds kill_grace{30};           // SIGTERM -> SIGKILL grace
  int max_restarts = 3;                          // per job; 0 when disableRetries
  bool restart_job_on_worker_restart = false;    // restart the whole gang on one failure
  std::map<std::string, std::string> extra_env;  // e.g. CLOUD_ML_TRIAL_ID for HP tuning trials
  // The CustomJobSpec as proto3 JSON. Vertex puts it, as a string, in the "job" field of
  // CLUSTER_SPEC and TF_CONFIG; empty = the field is left out.
  std::string job_spec_json;
  // TF_CONFIG's name for pool 0: "chief" (Vertex) or "master" (AI Platform Training's legacy
  // jobs); replica_contract.h encodes it, on every executor (Slurm carries it in its plan).
  std::string tf_config_primary_role = "chief";
  std::optional<RunAs> run_as;  // unset = replicas run as the server's user
};

enum class GangState { kQueued, kPending, kRunning, kSucceeded, kFailed, kCancelling, kCancelled };

// "QUEUED", "PENDING", ... : the stable spelling used in executors' state files and logs.
std::string GangStateName(GangState state);
// Inverse of GangStateName; nullopt for an unknown name.
std::optional<GangState> GangStateFromName(const std::string& name);

// Why a gang ended FAILED or CANCELLED, for machines (the control plane maps it to an error code;
// GangStatus::error_message stays the text for people). Set by the gang state machine
// (gang_lifecycle.h) together with the terminal state; kNone for SUCCEEDED and unfinished gangs.
enum class GangFailure {
  kNone,
  kReplicaFailed,     // a replica exited non-zero and the restart budget is spent
  kReplicaLost,       // a replica ended without a recorded exit code (its supervisor died)
  kTimeout,           // scheduling.timeout passed
  kCancelled,         // cancelled (through the API, or by the cluster's administrator)
  kStartFailed,       // a replica or the gang could not be started (no port, sbatch refused, ...)
  kLostOnAdopt,       // after a server restart its replicas were not found
  kImageUnavailable,  // the replica's image could not be pulled or run
  kConfigError,       // a replica exited with a permanent code (replica_contract::IsPermanentExit)
};

// "REPLICA_FAILED", "TIMEOUT", ... : the stable spelling in state files. "NONE" for kNone.
std::string GangFailureName(GangFailure failure);
// Inverse of GangFailureName; nullopt for an unknown name.
std::optional<GangFailure> GangFailureFromName(const std::string& name);

struct ReplicaStatus {
  int pool_index = 0;
  int replica_index = 0;
  int64_t pid = 0;               // 0 when not running
  std::optional<int> exit_code;  // set once it exited; 128+signal when killed by a signal
  int restarts = 0;
  // Set while its restart waits for the restart backoff (gang_lifecycle.h RestartBackoff): when
  // it starts again, and what it waits for, "restarting in 2s (restart 2 of 3)". The gang stays
  // in its state (RUNNING) meanwhile.
  std::optional<std::chrono::system_clock::time_point> restart_at;
  std::string restart_note;
};

struct GangStatus {
  std::string job_id;
  GangState state = GangState::kQueued;
  std::vector<ReplicaStatus> replicas;
  // For kFailed / kCancelled: a human-readable reason naming the replica and exit code, e.g.
  // "workerpool1 replica 0 exited with code 2 after 3 restarts"; or "timed out after 600s".
  std::string error_message;
  GangFailure failure = GangFailure::kNone;  // for kFailed / kCancelled: why, for machines
  std::optional<std::chrono::system_clock::time_point> start_time;  // first RUNNING
  // When it ended: the last replica's exit (its status file), also for a gang that ended while
  // the server was down and was found ended by Adopt; else when the executor saw the end.
  std::optional<std::chrono::system_clock::time_point> end_time;
  // While QUEUED for a reason other than capacity, that reason (the Slurm executor: "waiting for
  // the Slurm controller: ..."); the job controller records each new one in the state history.
  std::string waiting_note;
};

// One captured log line (stdout or stderr of one replica), with the time it was read.
struct LogLine {
  int64_t offset = 0;  // opaque, monotonically increasing cursor; pass back as `after`
  std::chrono::system_clock::time_point time;
  int pool_index = 0;
  int replica_index = 0;
  bool is_stderr = false;
  std::string text;  // without the trailing newline
};

class Executor {
 public:
  using Listener = std::function<void(const GangStatus&)>;
  virtual ~Executor() = default;

  // Registers the single state-change listener (call before Submit/Adopt).
  virtual void SetListener(Listener listener) = 0;

  // Checks, without side effects, that the gang could ever run on this executor: every machine and
  // accelerator type is known and the accelerators exist on the hardware. INVALID_ARGUMENT naming
  // the pool, e.g. "workerPoolSpecs[0]: NVIDIA_TESLA_T4 x1 requested but this host has no GPU".
  // The API calls it before acknowledging a job. (A replica larger than the host's CPU/memory is
  // not an error on the local executor: it is admitted as taking the whole host, with a warning.)
  virtual Status Validate(const GangSpec& spec) const = 0;

  // For a gang Validate accepts: what this executor will do otherwise than the spec asks, one
  // line each (the local executor: "workerpool0-0: n1-standard-4 asks for 4 vCPUs / 15 GiB but
  // this host has 2 vCPUs / 8 GiB; it runs taking the whole host (oversubscribed)"). The job
  // controller writes them into the job's state history at create. None by default.
  virtual std::vector<std::string> AdmissionNotes(const GangSpec& spec) const { return {}; }

  // A project's fair-share weight (an admin setting, controller/project_quota.h): executors that
  // queue gangs by project (the local one: gang_scheduler.h) give a project of weight 2 twice the
  // share of one of weight 1. Ignored by default (Slurm has its own fair share).
  virtual void SetProjectWeight(const std::string& /*project*/, double /*weight*/) {}

  // An admin's pause (controller/pause_book.h) of `scope`, a project or "*" for every project:
  // executors that queue gangs (the local one) start none of its queued gangs until it is resumed;
  // running gangs run on. Ignored by default (Slurm's queue is Slurm's).
  virtual void SetPaused(const std::string& /*scope*/, bool /*paused*/) {}

  // Accepts the gang: it is queued until all replicas fit at once, then started together.
  // INVALID_ARGUMENT if a replica can never fit this executor (names the replica and resource),
  // ALREADY_EXISTS if the job_id is known.
  virtual Status Submit(const GangSpec& spec) = 0;

  // After a server restart: re-attaches to the gang's processes if they still run (from the state
  // files under job_dir), else reports it FAILED with the reason; a gang that had not started is
  // queued again. A restart waiting for its backoff keeps its time; a gang that ended meanwhile
  // ends at its last replica's exit (end_time). Returns the resulting status.
  virtual StatusOr<GangStatus> Adopt(const GangSpec& spec) = 0;

  // Cancels: queued gangs end at once; running ones get SIGTERM, kill_grace, then SIGKILL, and end
  // CANCELLED; one whose restart waits for its backoff with nothing running ends at once.
  // NOT_FOUND for unknown ids; OK (no-op) for gangs already in a terminal state.
  virtual Status Cancel(const std::string& job_id) = 0;

  virtual StatusOr<GangStatus> Get(const std::string& job_id) const = 0;

  // Log lines of a gang after cursor `after` (-1 = from the beginning), at most `limit` lines, in
  // capture order. Works while running and after the end, also after a server restart.
  virtual StatusOr<std::vector<LogLine>> ReadLogs(const std::string& job_id, int64_t after,
                                                  int limit) const = 0;

  // Stops monitoring threads without killing running replicas (they are re-adopted later).
  virtual void Shutdown() = 0;

  // Whether what runs the replicas answers now: OK, or UNAVAILABLE saying what did not answer
  // (the Slurm executor: sinfo failed or timed out). OK by default (the replicas run on this
  // host). May block for a few seconds: /metrics calls it on its polling thread (as
  // trainyard_executor_up), never on a request.
  virtual Status CheckReachable() { return Status::Ok(); }

  // What the machines the executor runs replicas on hold now, for /metrics (the Slurm executor:
  // its partition's nodes, from the same sinfo as CheckReachable). nullopt where replicas run on
  // this host (the host's own gauges say it); an error as CheckReachable's.
  struct ClusterCapacity {
    int nodes = 0;         // in the partition
    int usable_nodes = 0;  // not down, drained, failing or in maintenance
    int cpus = 0;          // of the usable nodes
    int free_cpus = -1;    // idle CPUs of the usable nodes; -1 = not known
    int gpus = 0;          // of the usable nodes
    int64_t memory_bytes = 0;
  };
  virtual StatusOr<std::optional<ClusterCapacity>> ProbeCapacity() {
    TY_RETURN_IF_ERROR(CheckReachable());
    return std::optional<ClusterCapacity>();
  }
};

}  // namespace trainyard::executor
