// Where this process sits in a data-parallel job, read from the variables the platform injects
// (MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK, CLUSTER_SPEC, TF_CONFIG: the same ones Vertex AI
// sets), so a trainer needs no flags for it. The names, shapes and precedence are owned by
// replica_contract/replica_contract.h (DecodeRole), which the executors encode with; this header
// is the distributed subsystem's name for them.
#pragma once

#include "common/status.h"
#include "replica_contract/replica_contract.h"

namespace trainyard::distributed {

using EnvMap = replica_contract::EnvMap;
using DistributedConfig = replica_contract::ReplicaRole;

// Parses `env` (replica_contract::DecodeRole). Errors are INVALID_ARGUMENT naming the variable.
StatusOr<DistributedConfig> ConfigFromEnvironment(const EnvMap& env);

using replica_contract::ParseHostPort;

}  // namespace trainyard::distributed
