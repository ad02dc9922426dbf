// ExecutorRegistry: executor implementations by name (`trainyard server --executor NAME`), each
// with the command-line flags it reads.
//
// Each implementation registers one backend from its own library (RegisterLocalExecutor in
// src/local_executor, slurm::RegisterSlurmExecutor in src/slurm, RegisterFakeExecutor here): the
// flags it adds to `trainyard server` (--slurm-qos, --cgroup-parent, ...), parsed into its own
// options, and a factory that builds the executor from them and the server's ExecutorConfig. So a
// backend's option lives in its Register function and nowhere else. The server registers the
// backends it was built with, offers every backend's flags, and creates the one named on its
// command line. Registration is explicit, not by static initializers, so a static library's
// backend cannot be dropped by the linker.
//
// Not thread-safe: register, set flags and create from one thread (the server's start-up).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"

namespace trainyard::executor {

class ReplicaRuntime;  // replica_runtime.h

// What the server gives every executor it starts; backend-specific options come from the
// backend's own flags (ExecutorFlag).
struct ExecutorConfig {
  std::filesystem::path data_dir;  // the server's data dir (absolute)
  // Runs replicas whose job names an image (ReplicaSpec::image); not owned, outlives the
  // executor. nullptr = such jobs are refused at create with `no_container_reason`.
  ReplicaRuntime* container_runtime = nullptr;
  std::string no_container_reason = "this server was started without a container runtime";
  // The server's --pull-timeout-seconds: an image pull's deadline, retries included. The server's
  // own runtime already has it; executors whose replicas pull elsewhere (Slurm nodes) pass it on.
  // 0 = the runtime's default.
  std::chrono::milliseconds pull_timeout{0};
};

struct CreatedExecutor {
  std::unique_ptr<Executor> executor;
  std::vector<std::string> notes;  // printed once at start (inventory, enforced limits, ...)
};

// One flag a backend adds to `trainyard server`, e.g. "--slurm-qos". Parsing is the backend's,
// so executor libraries need no command-line library.
struct ExecutorFlag {
  std::string name;  // with its dashes: "--slurm-qos"
  std::string help;
  bool takes_value = true;   // false: a switch (--no-cgroups); `set` then gets ""
  std::string default_text;  // shown in --help; empty = none shown
  // Stores `value` in the backend's options. INVALID_ARGUMENT naming the flag for a bad value.
  std::function<Status(const std::string& value)> set;
};

using ExecutorFactory = std::function<StatusOr<CreatedExecutor>(const ExecutorConfig&)>;

// A backend: its flags and the factory that reads what they set.
struct ExecutorBackend {
  std::vector<ExecutorFlag> flags;
  ExecutorFactory create;
};

class ExecutorRegistry {
 public:
  // ALREADY_EXISTS if `name` or one of the backend's flag names is taken (by any backend);
  // INVALID_ARGUMENT for an empty name, a missing factory or a flag without "--" or setter.
  Status Register(const std::string& name, ExecutorBackend backend);
  // A backend without flags.
  Status Register(const std::string& name, ExecutorFactory factory);

  // Every registered backend's flags, by backend name then registration order. The setters stay
  // valid while this registry lives.
  std::vector<ExecutorFlag> Flags() const;
  // Sets one flag by name, as the command line would: the setter's status; NOT_FOUND for a flag
  // no backend declares.
  Status SetFlag(const std::string& flag, const std::string& value);

  // The factory's result; INVALID_ARGUMENT "--executor: 'x' is not a registered executor; use one
  // of fake, local, slurm" for an unknown name.
  StatusOr<CreatedExecutor> Create(const std::string& name, const ExecutorConfig& config) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  std::map<std::string, ExecutorBackend> backends_;
};

// Helpers for backends' setters: the value of `flag` as an integer in [min, max] or a number, or
// INVALID_ARGUMENT "--flag: 'x' is not an integer between 1 and 10000".
StatusOr<int> ParseIntFlag(const std::string& flag, const std::string& value, int min, int max);
StatusOr<double> ParseNumberFlag(const std::string& flag, const std::string& value);

// Registers "fake": a FakeExecutor that walks every job to SUCCEEDED on its own (control plane
// only; nothing runs). Its flag: --fake-run-ms (how long each job stays RUNNING; default 0).
// Defined in fake_executor.cc (library trainyard_executor_fake).
Status RegisterFakeExecutor(ExecutorRegistry* registry);

}  // namespace trainyard::executor
