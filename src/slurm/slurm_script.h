// What one attempt of a gang looks like to Slurm: the allocation (one component per group of
// pools with the same machine shape), the sbatch script and the launch plan the per-task
// launcher (trainyard-slurm-task, slurm_task.h) reads. Pure functions: unit tests check them
// against golden text.
//
// Ranks. Replicas are ordered pool 0 first, then pools 1, 2, 3, by index (replica_env.h); the
// gang's tasks are launched by one `srun` so SLURM_PROCID is that global rank — also across the
// components of a heterogeneous job, whose task ids Slurm numbers component by component.
//
// Allocation. Pools are merged into one component while their shape (CPUs, memory, GPUs per
// replica) is the same; one component -> a plain job with --ntasks; several -> a heterogeneous
// job (`#SBATCH hetjob` between components). Slurm starts heterogeneous jobs only across >= 2
// nodes (on one node they stay PENDING forever), so when the partition has fewer than 2 usable
// nodes the gang gets ONE homogeneous component sized for the largest pool instead (warning).
// Per replica: --cpus-per-task = the machine type's vCPUs and --mem-per-cpu its memory, both
// clamped to the largest node of the partition (warning); accelerators -> --gres=gpu:N per node
// with --ntasks-per-node=1 (a GPU replica owns its node's GPUs, like a Vertex VM).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"
#include "executor/job_log.h"
#include "machines/machine_catalog.h"
#include "slurm/slurm_client.h"

namespace trainyard::slurm {

struct SlurmComponent {
  int ntasks = 0;
  int cpus_per_task = 1;
  int64_t mem_per_cpu_mb = 0;  // 0 = leave to the cluster's default
  int gpus_per_task = 0;       // > 0: one task per node with --gres=gpu:N
};

struct SlurmAllocation {
  std::vector<SlurmComponent> components;  // > 1 = heterogeneous job
  // Replica indexes (into GangSpec::replicas) in rank order.
  std::vector<size_t> rank_order;
  std::vector<std::string> warnings;  // clamping, het-job fallback; logged into the job log
};

// Plans the allocation of `spec` on the nodes of the partition. INVALID_ARGUMENT naming the
// pool when a replica can never fit (what `catalog`'s Resolve refuses, more GPUs than any node
// has, more GPU replicas than nodes with that many GPUs) or the partition has no usable node.
StatusOr<SlurmAllocation> PlanAllocation(const executor::GangSpec& spec,
                                         const machines::MachineCatalog& catalog,
                                         const std::vector<SlurmNode>& nodes,
                                         const std::string& partition_name);

struct SbatchSettings {
  std::string partition, account, qos;  // empty = not set
  std::vector<std::string> extra_args;  // more #SBATCH options, e.g. "--constraint=ib"
  std::optional<std::chrono::seconds> time_limit;
  std::filesystem::path task_binary;  // absolute path of trainyard-slurm-task
  std::string job_name;               // --job-name; empty = "trainyard-<job_id>"
  // (uid, gid): --uid/--gid, the job runs as that user (Slurm takes it from root only).
  std::optional<std::pair<uint32_t, uint32_t>> submit_as;
};

// The Slurm job name of one attempt of a job: "trainyard-<job_id>-<attempt>". Unique per
// attempt, so after a crash between sbatch and persisting its answer the executor can ask
// squeue/sacct whether that attempt was submitted (SlurmClient::FindByName).
std::string SlurmJobName(const std::string& job_id, int attempt);

// The batch script of attempt `attempt_dir` (absolute; holds plan.json, batch.out, nodes).
// Where attempts and their tasks' files live: executor/job_dir_layout.h (SlurmAttemptDir,
// SlurmTaskDir, ReplicaWorkDir, ReplicaHpMetricFile).
std::string RenderSbatchScript(const executor::GangSpec& spec, const SlurmAllocation& alloc,
                               const SbatchSettings& settings,
                               const std::filesystem::path& attempt_dir);

struct LaunchPlanSettings {
  std::map<std::string, std::string> env_overrides;  // set in every task's inherited env
  std::string path_append;                           // appended to PATH (the server's bin dir)
  std::chrono::seconds rendezvous_timeout{300};
  executor::LogLimits log_limits;
  // A container task's image pull deadline ("pull_timeout_ms"); 0 = left out, the task's runtime
  // default applies.
  std::chrono::milliseconds pull_timeout{0};
};

// plan.json: what trainyard-slurm-task needs to build each rank's Vertex environment.
std::string RenderLaunchPlan(const executor::GangSpec& spec, const SlurmAllocation& alloc,
                             const LaunchPlanSettings& settings, int attempt,
                             const std::filesystem::path& attempt_dir);

// "1-02:03:04" style for --time (days-hours:minutes:seconds), rounded up to whole seconds.
std::string FormatSlurmTime(std::chrono::seconds s);

// Single-quotes `s` for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace trainyard::slurm
