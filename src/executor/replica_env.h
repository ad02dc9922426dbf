// The environment of one replica, exactly as Vertex AI sets it inside training containers, so
// unchanged Vertex code runs locally. The variables' names and JSON shapes (CLUSTER_SPEC,
// TF_CONFIG, MASTER_ADDR/PORT, WORLD_SIZE, RANK, LOCAL_RANK, AIP_*_DIR, CLOUD_ML_*) are owned by
// replica_contract/replica_contract.h, which also decodes them for the trainers; this file adds
// what only a launcher knows:
//   CUDA_VISIBLE_DEVICES  the assigned GPUs ("" = none, so CPU replicas never touch a GPU)
//   TRAINYARD_REPLICA_PORT  the port of this replica's address in CLUSTER_SPEC
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

#include "replica_contract/replica_contract.h"

namespace trainyard::executor {

using EnvMap = replica_contract::EnvMap;
using ClusterMember = replica_contract::Member;
using replica_contract::CurrentEnvironment;
using replica_contract::TaskName;

struct ReplicaEnvInput {
  std::string job_id;
  std::string job_spec_json;           // may be empty (then CLUSTER_SPEC/TF_CONFIG have no "job")
  std::string tf_config_primary_role;  // GangSpec::tf_config_primary_role ("" = "chief")
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

}  // namespace trainyard::executor
