// Where this process sits in a data-parallel job, read from the variables the platform injects
// (executor/replica_env.h, the same ones Vertex AI sets), so a trainer needs no flags for it.
//
// Sources, first match wins:
//   1. MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK (torch.distributed style; LOCAL_RANK optional).
//      All four or none: a partial set is an error naming the missing variable.
//   2. CLUSTER_SPEC (Vertex): cluster.workerpool0..3 lists "host:port" per replica; rank = the
//      replicas of lower pools, then task.index within task.type's pool (pool 0 first, then 1, 2,
//      3 — the order replica_env.h assigns RANK); master = workerpool0[0].
//   3. TF_CONFIG: cluster.chief, worker, ps in that order (= pools 0, 1, 2); task.type
//      "evaluator" is not part of the cluster and runs as a single process.
//   4. None of them: a single process (world size 1, rank 0).
// Values that disagree with each other (RANK >= WORLD_SIZE, a task index outside its pool,
// an unparsable port) are errors naming the variable, never silently a single process.
#pragma once

#include <map>
#include <string>

#include "common/status.h"

namespace trainyard::distributed {

using EnvMap = std::map<std::string, std::string>;

struct DistributedConfig {
  int world_size = 1;
  int rank = 0;
  int local_rank = 0;
  std::string master_addr;  // rendezvous host (rank 0 runs the TCPStore server); empty if single
  int master_port = 0;      // 1..65535 when world_size > 1
  std::string source;       // "single", "MASTER_ADDR", "CLUSTER_SPEC", "TF_CONFIG" (for logs)

  bool distributed() const { return world_size > 1; }
  bool is_chief() const { return rank == 0; }
  // "rank 1/2 (master 127.0.0.1:29500, from CLUSTER_SPEC)" or "single process".
  std::string Describe() const;
};

// Parses `env` (see the file comment). Errors are INVALID_ARGUMENT naming the variable.
StatusOr<DistributedConfig> ConfigFromEnvironment(const EnvMap& env);

// The calling process's environment as a map.
EnvMap CurrentEnvironment();

// The same, on the calling process's environment.
StatusOr<DistributedConfig> FromEnvironment();

// Splits "host:port" (also "[v6]:port"); errors name `what` (e.g. "CLUSTER_SPEC
// cluster.workerpool0[0]").
Status ParseHostPort(const std::string& text, const std::string& what, std::string* host,
                     int* port);

}  // namespace trainyard::distributed
