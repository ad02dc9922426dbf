// LocalExecutor: runs gangs as processes on this machine (the default executor).
//
// Layout under GangSpec::job_dir (all executor-owned; named by executor/job_dir_layout.h):
//   executor_state.json              gang + replica state, rewritten atomically on every change
//   logs/segment-<offset>.log        captured stdout/stderr of all replicas (job_log.h)
//   work/<task>/                     each replica's working directory (task = "workerpool1-0")
//   replicas/<task>/attempt-<n>.pid|.status|.wrapper.log   written by trainyard-exec-wrapper
//   replicas/<task>/hypertune/output.metrics               CLOUD_ML_HP_METRIC_FILE
//
// Each replica attempt is started through a ReplicaRuntime (replica_runtime.h): replicas whose
// spec names an image through LocalExecutorOptions::container_runtime (podman containers, with
// the machine type's --cpus/--memory instead of CPU pinning and cgroup v2 limits), the others
// through the default, HostProcessRuntime, which starts `trainyard-exec-wrapper ... -- argv` in
// a new session; the
// wrapper starts the replica in its own process group, timestamps and stores its output, and
// writes its exit code atomically when it ends. The wrapper does not depend on the server, so
// replicas keep running, logging and recording exit codes across a server crash, and Adopt()
// re-attaches to them (pids are checked against their /proc start time to rule out pid reuse).
//
// Durability: executor_state.json is replaced (temp + rename) on every change without fsync —
// enough for the server crashes re-adoption is about; terminal states are also fsynced, off the
// lock. Exit codes are fsynced by the wrapper. (Measured here: an fsync costs ~14 ms.)
//
// Waking up: the monitor thread runs a pass (PollOnce) at once when a gang is submitted or
// cancelled and when a wrapper exits (ExitWatcher: a pidfd per wrapper, also for re-adopted ones
// that are not our children), so a replica's end and the next admission take no poll tick; it
// also polls every poll_interval as a fallback. Tests may turn the thread off
// (LocalExecutorOptions::start_monitor) and step the executor with PollOnce/WaitForWork.
//
// Resource limits of a replica (src/executor/README.md): pinned to the CPU ids the scheduler
// placed it on (sched_setaffinity, unless the inventory's CPUs are not all ours), its own cgroup
// (v2 memory.max/cpu.max, or v1 memory.limit_in_bytes/cpu.cfs_quota_us) with its machine type's
// memory (at most the host's) and vCPUs where the host allows it (cgroup_limits.h), an OOM kill
// there becoming the replica's failure message (OomMessage),
// and OMP_NUM_THREADS/MKL_NUM_THREADS = its CPU count unless the job's env sets them.
// LimitNotes() says which of these are enforced here and why not.
//
// Lifecycle (decided by GangLifecycle, gang_lifecycle.h, as for every executor): Submit ->
// QUEUED; admitted by the GangScheduler (gang_scheduler.h: FIFO with
// reservation) -> PENDING while replicas start -> RUNNING once all are started. The gang SUCCEEDS
// when the primary replica (workerpool0; all replicas if the gang has no pool 0) exits 0; replicas
// still running then are stopped (SIGTERM, kill_grace, SIGKILL). A replica exiting non-zero is
// restarted (same port, GPUs, work dir) while the job's restart budget (GangSpec::max_restarts,
// counted per job) lasts, after the restart backoff (LocalExecutorOptions::restart_backoff,
// counted from its exit; the wait is persisted with the replica); with
// restart_job_on_worker_restart the whole gang is stopped and restarted instead. Budget exhausted
// -> FAILED "workerpool1 replica 0 exited with code 2 after 3 restarts". Timeout (measured from the
// first RUNNING) -> FAILED "timed out after 600s". Cancel -> CANCELLING -> CANCELLED.
#pragma once

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "executor/executor.h"
#include "executor/executor_registry.h"
#include "executor/gang_lifecycle.h"
#include "executor/host_process_runtime.h"
#include "executor/job_log.h"
#include "executor/process_ops.h"
#include "executor/replica_env.h"
#include "executor/replica_runtime.h"
#include "local_executor/cgroup_limits.h"
#include "local_executor/exit_watcher.h"
#include "local_executor/gang_scheduler.h"
#include "local_executor/host_inventory.h"
#include "machines/machine_catalog.h"

namespace trainyard::executor {

struct LocalExecutorOptions {
  std::filesystem::path data_dir;  // server data dir (the executor keeps nothing else there today)
  std::optional<int> cpus;         // unset = detect
  std::optional<double> memory_gib;  // unset = detect
  std::optional<int> gpus;           // unset = detect (nvidia-smi)
  // Replicas running at once, over all gangs (GangScheduler's max_replicas): unset = 4 per
  // scheduled CPU, at least 8; 0 = no cap. A gang with more is refused by Validate/Submit.
  std::optional<int> max_replicas;
  std::string host =
      "127.0.0.1";  // address replicas use for each other (CLUSTER_SPEC, MASTER_ADDR)

  // Everything below has working defaults; tests and embedders may change it.
  // What runs replicas; nullptr = a HostProcessRuntime over wrapper_path and process_ops.
  ReplicaRuntime* runtime = nullptr;
  // What runs replicas that name an image (ReplicaSpec::image): a container runtime, e.g.
  // container::PodmanReplicaRuntime; not owned. nullptr = jobs with images are refused at create
  // with `no_container_reason`.
  ReplicaRuntime* container_runtime = nullptr;
  std::string no_container_reason = "this executor was started without a container runtime";
  // The wrapper binary; empty = $TRAINYARD_EXEC_WRAPPER, then next to /proc/self/exe, then the
  // build tree, then PATH (see FindExecWrapper).
  std::filesystem::path wrapper_path;
  std::chrono::milliseconds poll_interval{100};  // how often running replicas are checked
  LogLimits log_limits;
  Clock* clock = nullptr;                  // nullptr = Clock::Real()
  ProcessOps* process_ops = nullptr;       // nullptr = ProcessOps::Real()
  std::optional<HostInventory> inventory;  // set = use as is, skip detection and overrides
  // Every GPU serves every acceleratorType (for hand-configured inventories whose device names
  // are not nvidia-smi product names); default: only the requested model (machines/gpu_model.h).
  bool any_gpu_model = false;
  bool pin_cpus = true;  // pin replicas to their CPUs when the inventory's CPU ids are ours
  CgroupOptions cgroup;  // per-replica memory/CPU cgroups where possible
  // false: no monitor thread; nothing is admitted, watched, restarted or stopped after the grace
  // until the caller runs PollOnce() (tests that step the executor themselves).
  bool start_monitor = true;
  // The wait before a restart (gang_lifecycle.h; default 1s doubling to 5 min), counted from
  // the failed replica's exit; {0s} restarts at once.
  RestartBackoff restart_backoff;
};

// Registers "local" in the server's executor registry with its flags (--cpus, --memory-gib,
// --gpus, --executor-poll-ms, --cgroup-parent, --no-cgroups, --any-gpu-model), which set the
// LocalExecutorOptions it creates the executor from, with the config's data dir and container
// runtime; its notes are the inventory and the LimitNotes().
Status RegisterLocalExecutor(ExecutorRegistry* registry);

class LocalExecutor : public Executor {
 public:
  explicit LocalExecutor(LocalExecutorOptions options);
  ~LocalExecutor() override;  // Shutdown()

  void SetListener(Listener listener) override;
  Status Validate(const GangSpec& spec) const override;
  std::vector<std::string> AdmissionNotes(const GangSpec& spec) const override;
  void SetProjectWeight(const std::string& project, double weight) override;
  void SetPaused(const std::string& scope, bool paused) override;
  Status Submit(const GangSpec& spec) override;
  StatusOr<GangStatus> Adopt(const GangSpec& spec) override;
  Status Cancel(const std::string& job_id) override;
  StatusOr<GangStatus> Get(const std::string& job_id) const override;
  StatusOr<std::vector<LogLine>> ReadLogs(const std::string& job_id, int64_t after,
                                          int limit) const override;
  void Shutdown() override;

  // One pass of the monitor's work, now, on the calling thread — what the monitor thread does on
  // every wake-up and every poll_interval: collects ended supervisors (no zombies), reads every
  // started replica's state (exit code, or lost), advances each gang's lifecycle (restarts, the
  // SIGTERM of a stop, SIGKILL once kill_grace is over, the timeout, the gang's end), forgets the
  // oldest ended gangs past kMaxEndedInMemory, admits and starts the queued gangs that fit, and
  // then hands the changes to the listener.
  // Thread-safe, also while the monitor thread runs: a pass works under the executor's lock like
  // Submit/Cancel, and passes are serialized, so the listener still sees each gang's changes in
  // order. Running both is correct but makes when a change happens depend on the thread; tests
  // that step the executor build it with start_monitor = false so that every change happens in
  // their PollOnce(). Must not be called from the listener (which runs inside a pass). A no-op
  // after Shutdown().
  void PollOnce();
  // Blocks until PollOnce() has something new to look at — a Submit, Cancel or Adopt, or the exit
  // of a replica's supervisor seen by the ExitWatcher since the last pass began — or until
  // `timeout` passed or Shutdown(); true in the first case. Time running out (a timeout, the end
  // of kill_grace) is no event: the caller decides when to poll again. For callers that step an
  // executor built with start_monitor = false; a monitor thread would take the wake-up first.
  bool WaitForWork(std::chrono::milliseconds timeout);

  const HostInventory& inventory() const { return inventory_; }
  // One line per limit (CPU pinning, cgroup memory/CPU, thread counts): enforced, or not and why
  // (e.g. "memory/CPU limits (cgroups): not enforced: /sys/fs/cgroup is not a cgroup v2 mount
  // and ..."). The server logs them once at start.
  std::vector<std::string> LimitNotes() const;

 private:
 public:  // defined in local_executor_state.h (implementation detail, not part of the API)
  struct Gang;
  struct Replica;

 private:
  Status SubmitLocked(const GangSpec& spec, bool readopting);
  std::vector<ReplicaDemand> DemandsOf(const GangSpec& spec) const;
  void Loop();
  void SyncLoop();
  void Tick();
  // Makes every replica's work dir before anything of the gang starts. Where the disk refuses
  // (full, no inodes, read-only: a fault that passes) the gang goes back to the queue, QUEUED
  // with GangStatus::waiting_note "waiting for room to start: ...", and is admitted again on a
  // later pass; false then. Other errors are left to LaunchReplica (START_FAILED).
  bool RoomToStart(Gang& gang);
  void StartGang(Gang& gang, const Admission& admission);
  // Makes the monitor thread run as soon as the attempt's supervisor exits (or now, if it has).
  void WatchExit(ReplicaRuntime& runtime, const ReplicaHandle& handle);
  // After a replica attempt ended: notes an OOM kill (when it `ended_now`: logged, and kept in
  // Replica::oom_note as its failure message) and removes its cgroups (kept in the replica's
  // record while processes of it linger).
  void ReleaseLimits(const Gang& gang, Replica& replica, bool ended_now);
  void LaunchReplica(Gang& gang, Replica& replica);
  // What BuildReplicaEnv needs for `replica`: the gang's members in rank order, GPUs, threads.
  ReplicaEnvInput EnvInputOf(const Gang& gang, const Replica& replica) const;
  // A re-adopted running replica: its attempt's cgroups found again (for its OOM report and
  // their removal) with their limits written again (cgroup_limits.h: ReleaseControllers).
  void ReadoptLimits(Gang& gang, Replica& r);
  // Puts a host-process replica in a fresh cgroup with its machine type's limits (logs why not).
  void LimitWithCgroup(Gang& gang, Replica& replica, ReplicaLaunch* launch);
  // The runtime that runs `replica` (the container runtime when its spec names an image).
  ReplicaRuntime& RuntimeOf(const Gang& gang, const Replica& replica) const;
  // Fills the container-only fields of `launch` (image, limits, env without the server's own).
  // The project's pip cache (PIP_CACHE_DIR) for every replica, and for a container the host's
  // package index settings (executor/package_index.h): into `inherited` and the launch's mounts.
  void GivePackageIndex(const Gang& gang, bool in_container, EnvMap* inherited,
                        ReplicaLaunch* launch) const;
  void PrepareContainerLaunch(const Gang& gang, const Replica& replica, const ReplicaSpec& spec,
                              ReplicaLaunch* launch) const;
  void PollReplica(Gang& gang, Replica& replica);
  // Starts the replicas whose restart backoff is over (all of them for a gang restart).
  void StartDueRestarts(Gang& gang);
  // Makes `only` (nullptr: every replica, a gang restart) wait for its restart until `due` (the
  // backoff), or starts it now if due.
  void ScheduleRestarts(Gang& gang, Replica* only, std::chrono::system_clock::time_point due);
  void AdvanceGang(Gang& gang);
  // Does what the gang's state machine decided (signals, restarts, the end of the gang).
  void Perform(Gang& gang, const LifecycleAction& action, const Replica* replica = nullptr);
  void Finished(Gang& gang);
  GangLifecycle Lifecycle(Gang& gang) const;
  // Appends "[trainyard] <text>" to the job log, best effort: a line the disk refuses is counted
  // (Gang::lost_log_lines), and the next write that succeeds — this one's, or Tick's retry of the
  // note alone — says "[trainyard] N log lines were lost: disk full" first, as the wrapper does
  // for replica lines.
  void SystemLog(const Gang& gang, const Replica* replica, const std::string& text);
  // Tick's part of that: the lost-lines note alone, while lines are counted as lost.
  void SayLostLogLines(const Gang& gang);
  // Appends `lines` after the lost-lines note, if any, and counts them as lost if it fails.
  void AppendSystemLines(const Gang& gang, std::vector<LogRecord> lines);
  GangStatus StatusOf(const Gang& gang) const;
  void Persist(const Gang& gang, bool durable = false);
  void Notify(const Gang& gang);
  // A replica that names an image: the container runtime exists, accepts the reference and works.
  Status ValidateImage(const std::string& field, const ReplicaSpec& replica) const;
  int MaxReplicas() const;  // options_.max_replicas or its default for inventory_.cpus
  Status ValidateLocked(const GangSpec& spec, std::vector<ReplicaDemand>* demands,
                        std::vector<std::string>* warnings) const;
  // The CUDA indices of the host's GPUs that serve `accel` (machines/gpu_model.h); INVALID_ARGUMENT
  // naming `field` and what the host has when there are none, or fewer than already + count.
  StatusOr<std::vector<int>> GpuCandidates(const std::string& field, const std::string& accel,
                                           int count, int already) const;

  LocalExecutorOptions options_;
  const machines::MachineCatalog& catalog_;  // MachineCatalog::Default(), as spec validation
  Clock& clock_;
  std::unique_ptr<ReplicaRuntime> owned_runtime_;
  ReplicaRuntime& runtime_;
  // Before inventory_: detection appends to it while inventory_ is being initialized.
  std::vector<std::string> inventory_warnings_;
  HostInventory inventory_;
  bool pin_cpus_ = false;
  std::string pin_note_;  // why replicas are (not) pinned
  CgroupLimits cgroups_;

  // One PollOnce at a time (the monitor thread and callers), held while the listener runs; taken
  // before mu_.
  std::mutex poll_mu_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wake_ = false;  // run a pass now (new gang, cancel, a supervisor exited)
  Listener listener_;
  GangScheduler scheduler_;
  std::map<std::string, std::unique_ptr<Gang>> gangs_;
  std::vector<GangStatus> pending_notifications_;
  // Ended replicas whose runtime leftovers (a container) are removed after the pass has told the
  // listener: a `podman rm` (~50 ms) must not stand between a job's end and its recorded state.
  std::vector<std::pair<ReplicaRuntime*, ReplicaHandle>> pending_releases_;
  // fsyncs of terminal states, done by sync_thread_ so they never hold up mu_ or a tick.
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  std::vector<std::filesystem::path> pending_fsyncs_;  // guarded by sync_mu_
  bool sync_stop_ = false;                             // guarded by sync_mu_
  std::thread sync_thread_;
  std::set<int> ports_in_use_;
  // Supervisors this instance started, until collected, with the runtime that started them.
  std::vector<std::pair<ReplicaRuntime*, ReplicaHandle>> unreaped_;
  // Ended gangs stay in memory for fast Get/Cancel up to this many; older ones are answered
  // from their executor_state.json through the job-dir registry.
  static constexpr size_t kMaxEndedInMemory = 1024;
  std::deque<std::string> ended_;
  std::thread thread_;  // the monitor: Loop(); not started without start_monitor
  // Declared last: destroyed (its thread joined) before the members its callback uses.
  std::unique_ptr<ExitWatcher> exit_watcher_;
};

}  // namespace trainyard::executor
