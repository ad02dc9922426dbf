// trainyard-slurm-task: what every task of a Trainyard gang runs under `srun` (slurm_script.h).
//
//   trainyard-slurm-task --plan <attempt_dir>/plan.json
//
// 1. rank = $SLURM_PROCID, world = $SLURM_NTASKS (must equal the plan's task count); the task is
//    plan.tasks[rank] (pool, replica, argv, user env).
// 2. Its address: the NodeAddr of $SLURMD_NODENAME from <attempt_dir>/nodes (written by the batch
//    script from `scontrol show node`), and a free TCP port picked on this node. It publishes
//    "addr:port" as <attempt_dir>/rendezvous/<rank> and waits (rendezvous_timeout_s) until every
//    rank has, so each task knows every replica's address: MASTER_ADDR is rank 0's node, i.e.
//    the first node of the allocation.
// 3. Its environment: executor::BuildReplicaEnv (replica_env.h) — the same CLUSTER_SPEC,
//    TF_CONFIG, MASTER_ADDR/PORT, WORLD_SIZE, RANK, AIP_*, CLOUD_ML_* as the LocalExecutor's —
//    over the task's own environment (Slurm's, i.e. the submitting server's), with
//    CUDA_VISIBLE_DEVICES as Slurm set it for the GRES (empty without GPUs).
// 4. It then becomes trainyard-exec-wrapper (exec_wrapper.h) in its work dir: the replica's output
//    goes to <task dir>/log (job_log.h; the executor copies it into the job log), its pid and
//    exit code to <task dir>/pid and /status; SIGTERM from scancel/srun reaches the replica.
// A task whose plan names an image runs as a container instead: the environment is the Vertex and
// user variables only, and it runs through the container runtime given to SlurmTaskMain
// (container::PodmanReplicaRuntime, created by this binary's main), i.e. podman on the node.
// Exit status: the replica's exit code (so srun --kill-on-bad-exit and Slurm's job state see a
// failure), 2 for a launcher error (message on stderr, which Slurm writes to batch.out).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "executor/replica_env.h"
#include "executor/replica_runtime.h"

namespace trainyard::slurm {

// Makes the runtime of a task whose plan names an image, with the plan's image pull deadline
// (`pull_timeout`; 0 = the runtime's default).
using ContainerRuntimeFactory = std::function<std::unique_ptr<executor::ReplicaRuntime>(
    std::chrono::milliseconds pull_timeout)>;

// `make_containers`: called once, only for a task that names an image; nullptr = such tasks fail
// with a launcher error naming what is missing.
int SlurmTaskMain(int argc, char** argv, const ContainerRuntimeFactory& make_containers = nullptr);

// The plan's image pull deadline (plan.json "pull_timeout_ms"); 0 when it names none.
std::chrono::milliseconds PlanPullTimeout(const nlohmann::json& plan);

// Address of `node` in the "name addr" lines of a nodes file; `node` itself when absent.
std::string NodeAddress(const std::string& nodes_file_text, const std::string& node);

// CUDA indices from a CUDA_VISIBLE_DEVICES value ("0,1" -> {0,1}); non-numeric entries skipped.
std::vector<int> ParseDeviceList(const std::string& value);

}  // namespace trainyard::slurm
