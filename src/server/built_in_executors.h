// The executor backends this build of the server has (executor_registry.h): fake always, local
// and slurm where their libraries were built.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor_registry.h"

namespace trainyard::server {

// Registers every built-in backend, with its flags, in `registry`. The registry's errors (a name
// or flag registered twice).
Status RegisterBuiltInExecutors(executor::ExecutorRegistry* registry);

// The names of the job-dir registries (<data-dir>/<name>/jobs/<id>, executor/gang_record.h) of
// the executors this build has: what retention forgets and restore rewrites.
std::vector<std::string> BuiltInJobDirRegistries();

}  // namespace trainyard::server
