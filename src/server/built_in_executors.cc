#include "server/built_in_executors.h"

#ifdef TRAINYARD_HAVE_LOCAL_EXECUTOR
#include "local_executor/local_executor.h"
#include "local_executor/local_executor_state.h"
#endif
#ifdef TRAINYARD_HAVE_SLURM_EXECUTOR
#include "slurm/slurm_executor.h"
#include "slurm/slurm_executor_state.h"
#endif

namespace trainyard::server {

Status RegisterBuiltInExecutors(executor::ExecutorRegistry* registry) {
  TY_RETURN_IF_ERROR(executor::RegisterFakeExecutor(registry));
#ifdef TRAINYARD_HAVE_LOCAL_EXECUTOR
  TY_RETURN_IF_ERROR(executor::RegisterLocalExecutor(registry));
#endif
#ifdef TRAINYARD_HAVE_SLURM_EXECUTOR
  TY_RETURN_IF_ERROR(slurm::RegisterSlurmExecutor(registry));
#endif
  return Status::Ok();
}

std::vector<std::string> BuiltInJobDirRegistries() {
  std::vector<std::string> registries;
#ifdef TRAINYARD_HAVE_LOCAL_EXECUTOR
  registries.push_back(executor::kLocalRegistry);
#endif
#ifdef TRAINYARD_HAVE_SLURM_EXECUTOR
  registries.push_back(slurm::kSlurmRegistry);
#endif
  return registries;
}

}  // namespace trainyard::server
