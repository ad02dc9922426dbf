// SlurmExecutor: runs each gang as one Slurm job (executor.h contract; src/slurm/README.md).
//
// Submit plans the allocation (slurm_script.h: one component per machine shape, heterogeneous
// job or a homogeneous fallback on a 1-node partition), writes <job_dir>/slurm/attempt-<n>/
// {job.sbatch, plan.json} and runs sbatch. Every task runs trainyard-slurm-task (slurm_task.h),
// which builds the replica's Vertex environment at run time and supervises the replica like the
// LocalExecutor's wrapper. GangSpec::job_dir must be on a file system every node of the
// partition mounts at the same path (the tasks write their logs, pid and exit code there).
//
// A monitor thread polls Slurm (SlurmClient::Query, every poll_interval) and the tasks' files:
//   Slurm PENDING -> QUEUED (the pending reason is logged when it changes), CONFIGURING ->
//   PENDING, RUNNING -> RUNNING; the gang SUCCEEDS when the primary replica (pool 0; all
//   replicas without pool 0) exited 0 — replicas still running are then stopped; it FAILS on
//   FAILED/NODE_FAIL/OUT_OF_MEMORY/... with "workerpool1 replica 0 exited with code 3 (Slurm job
//   12 FAILED, exit code 3:0)"; PREEMPTED or a failure with restart budget left (max_restarts)
//   -> a new attempt (new sbatch); TIMEOUT -> FAILED "timed out after 600s"; CANCELLED by
//   someone else -> CANCELLED. A job Slurm no longer knows (purged, no accounting) is judged
//   from its tasks' exit codes.
// Timeout: --time on the job, plus the executor's own check from the first RUNNING.
// Cancel: scancel --signal=TERM (the replicas' own SIGTERM handlers run: the trainer
// checkpoints), then after kill_grace a plain scancel. Ends CANCELLED.
// Logs: each task's log (<attempt>/<task>/log) and the batch script's output are copied into
// <job_dir>/logs (job_log.h) by the monitor, so ReadLogs has one cursor space, survives
// restarts, and only the server writes the job log.
// State: <job_dir>/slurm_state.json (atomic), with the Slurm job id: Adopt() after a server
// restart re-attaches by that id. Each attempt is submitted under a unique job name
// (trainyard-<job id>-<attempt>) after a "submitting attempt N" marker is persisted; if the
// server dies between sbatch and recording the id, Adopt finds the job by that name (squeue,
// then sacct) instead of submitting it twice, and submits it only if Slurm has no such job.
//
// Thread-safety: as executor.h. Slurm commands run without the executor's lock held.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "executor/executor.h"
#include "executor/executor_registry.h"
#include "executor/gang_lifecycle.h"
#include "executor/job_log.h"
#include "executor/process_ops.h"
#include "executor/replica_runtime.h"
#include "machines/machine_catalog.h"
#include "slurm/slurm_client.h"
#include "slurm/slurm_projects.h"

namespace trainyard::slurm {

struct SlurmExecutorOptions {
  std::filesystem::path data_dir;  // server data dir: <data_dir>/slurm/jobs/<id> -> job dir
  std::string partition;           // empty = the cluster's default partition
  std::string account;             // empty = the user's default account
  std::string qos;                 // empty = the default QoS
  // Per project (and serviceAccount): account, partition, QOS and the user to submit as
  // (slurm_projects.h); what it leaves out comes from the three fields above. The default table
  // is empty: every job gets those.
  SlurmProjects projects;
  std::vector<std::string> extra_sbatch_args;  // more #SBATCH options, e.g. "--constraint=ib"
  // Checks image references at create (ReplicaRuntime::CheckImage); the tasks themselves run
  // containers with trainyard-slurm-task's own runtime, on their nodes. Not owned. nullptr =
  // jobs with images are refused with `no_container_reason`.
  executor::ReplicaRuntime* container_runtime = nullptr;
  std::string no_container_reason = "this server runs no containers";
  // The deadline of a task's image pull on its node (the server's --pull-timeout-seconds, carried
  // in plan.json); 0 = the node's runtime default (15 min).
  std::chrono::milliseconds pull_timeout{0};

  // Everything below has working defaults; tests and embedders may change it.
  // trainyard-slurm-task; empty = $TRAINYARD_SLURM_TASK, next to /proc/self/exe, the build
  // tree, PATH. It must be at the same path on every node (shared install).
  std::filesystem::path task_binary;
  std::filesystem::path slurm_bin_dir;  // where sbatch & co. are; empty = PATH
  std::chrono::milliseconds poll_interval{2000};
  std::chrono::seconds rendezvous_timeout{300};
  // A job Slurm answers nothing about this many polls in a row counts as gone.
  int missing_polls_before_lost = 3;
  executor::LogLimits log_limits;
  executor::Clock* clock = nullptr;  // nullptr = Clock::Real()
  SlurmClient* client = nullptr;     // nullptr = CliSlurmClient over the real commands
  bool start_monitor = true;         // false: nothing polls until PollOnce() (unit tests)
  // The wait before a new attempt after a failure (gang_lifecycle.h; default 1s doubling to
  // 5 min), counted from the failed task's exit; persisted, so it survives a server restart.
  executor::RestartBackoff restart_backoff;
};

// The task launcher per the order above; NOT_FOUND naming what was tried.
StatusOr<std::filesystem::path> FindSlurmTaskBinary(const std::filesystem::path& configured);

// Registers "slurm" in the server's executor registry with its flags --slurm-partition,
// --slurm-account and --slurm-qos (SlurmExecutorOptions' partition, account, qos) and
// --slurm-projects FILE (loaded into SlurmExecutorOptions::projects when the executor is created:
// a table that fails SlurmProjects::Load stops the server with its message).
Status RegisterSlurmExecutor(executor::ExecutorRegistry* registry);

class SlurmExecutor : public executor::Executor {
 public:
  explicit SlurmExecutor(SlurmExecutorOptions options);
  ~SlurmExecutor() override;  // Shutdown()

  void SetListener(Listener listener) override;
  Status Validate(const executor::GangSpec& spec) const override;
  std::vector<std::string> AdmissionNotes(const executor::GangSpec& spec) const override;
  Status Submit(const executor::GangSpec& spec) override;
  StatusOr<executor::GangStatus> Adopt(const executor::GangSpec& spec) override;
  Status Cancel(const std::string& job_id) override;
  StatusOr<executor::GangStatus> Get(const std::string& job_id) const override;
  StatusOr<std::vector<executor::LogLine>> ReadLogs(const std::string& job_id, int64_t after,
                                                    int limit) const override;
  void Shutdown() override;
  // sinfo for the partition, with a short timeout (the monitor's commands wait up to a minute).
  Status CheckReachable() override;
  StatusOr<std::optional<ClusterCapacity>> ProbeCapacity() override;

  // One monitor round now (query Slurm, read task files, copy logs, advance states, notify).
  // What the monitor thread does every poll_interval; tests call it directly.
  void PollOnce();

  struct Gang;  // slurm_executor_state.h

 private:
  // Where the gang's Slurm job goes: options_.projects over the server-wide fields.
  SlurmTarget TargetFor(const executor::GangSpec& spec) const;
  Status ValidateWith(const executor::GangSpec& spec, const std::vector<SlurmNode>& nodes) const;
  // What needs no node list: the gang's basics and its images.
  Status ValidateSpec(const executor::GangSpec& spec) const;
  // Plans the allocation and writes attempt-<n>/{plan.json,job.sbatch} (a fresh directory);
  // touches no executor state (runs without the lock). Returns the script to sbatch.
  StatusOr<std::filesystem::path> PrepareAttempt(const executor::GangSpec& spec, int attempt,
                                                 std::vector<std::string>* warnings) const;
  void Loop();
  void Apply(Gang& gang, const SlurmJobInfo* info, bool query_ok);
  void FinishFromSlurm(Gang& gang, const std::string& slurm_state, const std::string& exit_code);
  // The gang's state machine: only gang restarts (one allocation), and the executor's own timeout
  // check as a backstop to Slurm's --time (kill_grace + 60 s later).
  executor::GangLifecycle Lifecycle(Gang& gang) const;
  // Does what the state machine decided; `why` prefixes a gang restart's log line.
  void Perform(Gang& gang, const executor::LifecycleAction& action, const std::string& why = "");
  // `exit_code`: the failed replica's (-1 when none is known); kExitConfig is never restarted.
  // `exited`: when it exited (the restart backoff counts from it), if known.
  void RestartOrFail(Gang& gang, int exit_code, const std::string& message,
                     std::optional<std::chrono::system_clock::time_point> exited);
  void ReadTaskFiles(Gang& gang);
  void SyncLogs(Gang& gang);
  void SystemLog(const Gang& gang, const std::string& text);
  void Persist(const Gang& gang);
  void Notify(const Gang& gang);
  void RunCancels();  // pending_cancels_, without the lock
  // Gangs with resubmit_pending (a new attempt) or a submit marker left by a crash (looked up by
  // name first); sbatch and the lookup run without the lock.
  void RunResubmissions();
  // One resubmission: (spec, attempt, look up first) — a new attempt after a restart of the
  // gang, or an attempt whose marker survived a crash and may already be in Slurm.
  struct Resubmission {
    executor::GangSpec spec;
    int attempt = 0;
    bool lookup = false;
  };
  // Under the lock: the gangs to (re)submit now, marked in flight.
  std::vector<Resubmission> TakeResubmissions();
  // Without the lock: the Slurm id of an earlier submission of this attempt (nullopt if none);
  // false when Slurm cannot be asked (the gang waits for the next pass).
  bool LookUpEarlierSubmission(const Resubmission& work, std::optional<std::string>* found_id);
  // Under the lock: records the outcome of sbatch (or of the lookup) in the gang.
  void FinishResubmission(const Resubmission& work, const std::optional<std::string>& found_id,
                          const StatusOr<std::string>& slurm_id,
                          const std::vector<std::string>& warnings);
  void DeliverNotifications();  // listener calls, without the lock
  // Under the lock: a gang Submit took (submitted, or waiting for slurmctld) is logged, saved,
  // announced, and the loop woken.
  void Accepted(Gang& gang, const std::vector<std::string>& warnings);
  // Submit's sbatch found slurmctld unreachable: the gang is kept, QUEUED, waiting for it.
  Status AcceptWhileUnreachable(std::unique_ptr<Gang> gang, const Status& why,
                                const std::vector<std::string>& warnings);
  // Under the lock: the gang waits for slurmctld (a log line the first time), its marker kept.
  void WaitForController(Gang& gang, const Status& why);

  SlurmExecutorOptions options_;
  const machines::MachineCatalog& catalog_;  // MachineCatalog::Default(), as spec validation
  executor::Clock& clock_;
  std::unique_ptr<SlurmClient> owned_client_;
  SlurmClient& client_;
  // CheckReachable's: the real commands with a 5 s timeout; null when a client was given (tests),
  // which then answers the probe too.
  std::unique_ptr<SlurmClient> probe_client_;

  std::mutex poll_mu_;  // one PollOnce at a time (monitor thread or a test)
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wake_ = false;
  Listener listener_;
  std::map<std::string, std::unique_ptr<Gang>> gangs_;
  std::vector<executor::GangStatus> pending_notifications_;
  // Slurm actions decided under the lock, run after it is released.
  struct CancelAction {
    std::string slurm_id, signal;  // slurm_id "": the job named SlurmJobName(job_id, attempt)
    std::string job_id;
    int attempt = 0;
  };
  std::vector<CancelAction> pending_cancels_;
  std::thread thread_;
};

}  // namespace trainyard::slurm
