#include "distributed/distributed_config.h"

namespace trainyard::distributed {

StatusOr<DistributedConfig> ConfigFromEnvironment(const EnvMap& env) {
  return replica_contract::DecodeRole(env);
}

}  // namespace trainyard::distributed
