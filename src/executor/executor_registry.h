// ExecutorRegistry: executor implementations by name (`trainyard server --executor NAME`).
//
// Each implementation registers one factory from its own library (RegisterLocalExecutor in
// src/local_executor, slurm::RegisterSlurmExecutor in src/slurm, RegisterFakeExecutor here); the
// server registers the ones it was built with and creates the one named on its command line.
// Registration is explicit, not by static initializers, so a static library's factory cannot be
// dropped by the linker.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"

namespace trainyard::executor {

// What the server knows about the executor it starts; each implementation reads its part.
struct ExecutorConfig {
  std::filesystem::path data_dir;  // the server's data dir (absolute)
  // local: the host inventory overrides (unset = detect), replica address, polling, limits.
  std::optional<int> cpus;
  std::optional<double> memory_gib;
  std::optional<int> gpus;
  std::string host = "127.0.0.1";
  std::chrono::milliseconds poll_interval{100};
  std::string cgroup_parent;  // empty = the server's own cgroup
  bool cgroups = true;
  bool any_gpu_model = false;
  // slurm: where jobs go (empty = the cluster's defaults).
  std::string slurm_partition, slurm_account, slurm_qos;
  // fake: how long each job stays RUNNING.
  std::chrono::milliseconds fake_run_time{50};
};

struct CreatedExecutor {
  std::unique_ptr<Executor> executor;
  std::vector<std::string> notes;  // printed once at start (inventory, enforced limits, ...)
};

using ExecutorFactory = std::function<StatusOr<CreatedExecutor>(const ExecutorConfig&)>;

class ExecutorRegistry {
 public:
  // ALREADY_EXISTS if `name` is taken; INVALID_ARGUMENT for an empty name or factory.
  Status Register(const std::string& name, ExecutorFactory factory);
  // The factory's result; INVALID_ARGUMENT "--executor: 'x' is not a registered executor; use one
  // of fake, local, slurm" for an unknown name.
  StatusOr<CreatedExecutor> Create(const std::string& name, const ExecutorConfig& config) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  std::map<std::string, ExecutorFactory> factories_;
};

// Registers "fake": a FakeExecutor that walks every job to SUCCEEDED on its own (control plane
// only; nothing runs). Defined in fake_executor.cc (library trainyard_executor_fake).
Status RegisterFakeExecutor(ExecutorRegistry* registry);

}  // namespace trainyard::executor
