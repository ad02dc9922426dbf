// The environment of one replica, exactly as Vertex AI sets it inside training containers
// (shared/reference/vertex-and-peers.md §3), so unchanged Vertex code runs locally:
//
//   CLUSTER_SPEC  {"cluster":{"workerpool0":["h:p"],"workerpool1":[...],...},
//                  "environment":"cloud","task":{"type":"workerpool1","index":0,"trial":""},
//                  "job":"<CustomJobSpec JSON, as a string>"}
//                 (only pools that have replicas are listed; "job" only when known)
//   TF_CONFIG     same shape with TensorFlow roles: cluster{chief, worker, ps} (pools 0, 1, 2;
//                 evaluators are not in "cluster"), task.type chief|worker|ps|evaluator
//   MASTER_ADDR/MASTER_PORT  the primary replica's address; WORLD_SIZE = all replicas;
//   RANK          global rank, pool 0 first then pool 1, 2, 3 in index order; LOCAL_RANK=0
//   AIP_MODEL_DIR, AIP_CHECKPOINT_DIR, AIP_TENSORBOARD_LOG_DIR
//                 <base>/model/, <base>/checkpoints/, <base>/logs/ (<base>/<trial>/... for a
//                 trial); not set without a base output dir. gs:// URIs stay gs:// (the trainer
//                 maps them through TRAINYARD_BUCKET_ROOT, which is passed through).
//   CLOUD_ML_JOB_ID, CLOUD_ML_TRIAL_ID (trials), CLOUD_ML_HP_METRIC_FILE (per replica)
//   CUDA_VISIBLE_DEVICES  the assigned GPUs ("" = none, so CPU replicas never touch a GPU)
//   PYTHONUNBUFFERED=1    unless the user sets it: Python output would otherwise reach the log
//                         only when the process ends.
//   OMP_NUM_THREADS, MKL_NUM_THREADS  the replica's CPU count (the CPUs it is pinned to) unless
//                         the user's env sets them: OpenMP/MKL (LibTorch, NumPy) otherwise start
//                         one thread per host core in every replica and oversubscribe the host.
//
// Precedence: the server's own environment (minus any inherited platform variables) < the
// replica's user env (containerSpec.env, with $(VAR) expanded Kubernetes-style) < the platform
// variables above < GangSpec::extra_env.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace trainyard::executor {

using EnvMap = std::map<std::string, std::string>;

// "workerpool1-0": how replicas are named in logs, directories and messages.
std::string TaskName(int pool_index, int replica_index);

struct ClusterMember {
  int pool_index = 0;
  int replica_index = 0;
  std::string address;  // "127.0.0.1:41234"
};

struct ReplicaEnvInput {
  std::string job_id;
  std::string job_spec_json;           // may be empty
  std::string base_output_dir;         // may be empty
  std::string trial_id;                // empty unless an HP-tuning trial
  std::vector<ClusterMember> members;  // every replica of the gang, pool then index order
  size_t self = 0;                     // this replica's position in `members`
  std::vector<int> gpus;               // CUDA indices assigned to this replica
  std::filesystem::path hp_metric_file;
  int cpu_threads = 0;  // > 0: OMP_NUM_THREADS/MKL_NUM_THREADS unless the user env sets them
};

std::string ClusterSpecJson(const ReplicaEnvInput& in);
std::string TfConfigJson(const ReplicaEnvInput& in);

// The platform variables only (the list above, without inherited or user env).
EnvMap PlatformEnv(const ReplicaEnvInput& in);

// Expands $(VAR) in `value` from `vars`; $$(VAR) becomes a literal $(VAR); unknown references
// stay as written (Kubernetes EnvVar semantics, as Vertex documents for env[]).
std::string ExpandEnvReferences(const std::string& value, const EnvMap& vars);

// The complete environment per the precedence above. `inherited` is typically the server's
// environ; `user` the replica's env; `extra` GangSpec::extra_env.
EnvMap BuildReplicaEnv(const EnvMap& inherited, const EnvMap& user, const ReplicaEnvInput& in,
                       const EnvMap& extra);

// The calling process's environment as a map.
EnvMap CurrentEnvironment();

}  // namespace trainyard::executor
