#include "slurm/slurm_task.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/file_util.h"
#include "common/json_parse.h"
#include "executor/host_process_runtime.h"
#include "executor/package_index.h"
#include "executor/replica_status_file.h"
#include "executor/run_as.h"
#include "executor/tcp_port.h"

namespace trainyard::slurm {
namespace fs = std::filesystem;
using executor::EnvMap;

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "trainyard-slurm-task: %s\n", message.c_str());
  return 2;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool ParseInt(const std::string& s, int* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || v < 0) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

std::string NodeAddress(const std::string& text, const std::string& node) {
  std::istringstream in(text);
  std::string name, addr;
  while (in >> name >> addr) {
    if (name == node) return addr;
  }
  return node;
}

std::vector<int> ParseDeviceList(const std::string& value) {
  std::vector<int> out;
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int v = 0;
    if (ParseInt(item, &v)) out.push_back(v);
  }
  return out;
}

namespace {

// This task's address (its node's, from the allocation's `nodes` file) and a free port,
// published in the attempt's rendezvous dir; then every rank's "ADDR:PORT", in rank order, once
// all have published. The directory must be shared by the nodes.
StatusOr<std::vector<std::string>> Rendezvous(const nlohmann::json& plan, int rank, int world) {
  const fs::path attempt_dir = plan.at("attempt_dir").get<std::string>();
  std::string node = Env("SLURMD_NODENAME");
  std::string addr = node;
  if (auto nodes = ReadFile(attempt_dir / "nodes"); nodes.ok() && !node.empty()) {
    addr = NodeAddress(*nodes, node);
  }
  if (addr.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    addr = host;
  }
  TY_ASSIGN_OR_RETURN(int port, executor::PickFreeTcpPort(addr));
  const fs::path rdv = attempt_dir / "rendezvous";
  if (Status s = WriteFileAtomic(rdv / std::to_string(rank), addr + ":" + std::to_string(port));
      !s.ok()) {
    return Status(s.code(),
                  s.ToString() + " (the job directory must be on a file system every node shares)");
  }
  std::vector<std::string> addresses(world);
  const int timeout_s = plan.value("rendezvous_timeout_s", 300);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (true) {
    std::string missing;
    for (int r = 0; r < world; ++r) {
      if (!addresses[r].empty()) continue;
      auto a = ReadFile(rdv / std::to_string(r));
      if (a.ok() && !a->empty()) {
        addresses[r] = *a;
      } else {
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    if (missing.empty()) return addresses;
    if (std::chrono::steady_clock::now() > deadline) {
      return UnavailableError("rank(s) " + missing + " did not publish their address in " +
                              rdv.string() + " within " + std::to_string(timeout_s) +
                              "s (did they start? is the directory shared between nodes?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The Vertex env of this task (replica_env.h): its gang from the plan, in rank order.
executor::ReplicaEnvInput EnvInputOf(const nlohmann::json& plan,
                                     const std::vector<std::string>& addresses, int rank) {
  const auto& tasks = plan.at("tasks");
  executor::ReplicaEnvInput in;
  in.job_id = plan.at("job_id").get<std::string>();
  in.job_spec_json = plan.value("job_spec_json", "");
  in.tf_config_primary_role = plan.value("tf_config_primary_role", "");
  in.base_output_dir = plan.value("base_output_dir", "");
  in.trial_id = plan.value("trial_id", "");
  for (size_t r = 0; r < addresses.size(); ++r) {
    in.members.push_back(
        {tasks[r].at("pool").get<int>(), tasks[r].at("replica").get<int>(), addresses[r]});
  }
  in.self = static_cast<size_t>(rank);
  in.gpus = ParseDeviceList(Env("CUDA_VISIBLE_DEVICES"));
  in.hp_metric_file = tasks.at(rank).at("hp_metric_file").get<std::string>();
  return in;
}

// The environment: the node's (host processes only) with the plan's overrides, then the Vertex
// and user variables.
EnvMap TaskEnv(const nlohmann::json& plan, const nlohmann::json& self,
               const executor::ReplicaEnvInput& in, bool in_container,
               const std::optional<executor::RunAs>& run_as) {
  // A container gets the Vertex and user variables only (not the node's PATH or HOME).
  EnvMap inherited = in_container ? EnvMap{} : executor::CurrentEnvironment();
  if (!in_container) executor::ApplyIdentityEnv(run_as, &inherited);
  for (const auto& [k, v] : plan.value("env_overrides", EnvMap{})) inherited[k] = v;
  std::string path_append = in_container ? "" : plan.value("path_append", "");
  if (!path_append.empty()) {
    std::string& path = inherited["PATH"];
    path = (path.empty() ? "/usr/local/bin:/usr/bin:/bin" : path) + ":" + path_append;
  }
  EnvMap env = executor::BuildReplicaEnv(inherited, self.value("env", EnvMap{}), in,
                                         plan.value("extra_env", EnvMap{}));
  // Slurm's value verbatim: it may name devices by UUID, which ParseDeviceList drops.
  env["CUDA_VISIBLE_DEVICES"] = Env("CUDA_VISIBLE_DEVICES");
  return env;
}

// The launch of this task's replica (a host process, or a container when the task names an
// image), with its directories created.
StatusOr<executor::ReplicaLaunch> LaunchOf(const nlohmann::json& plan, int rank,
                                           const executor::ReplicaEnvInput& in) {
  const auto& self = plan.at("tasks").at(rank);
  const std::string image = self.value("image", "");
  fs::path work = self.at("work_dir").get<std::string>();
  fs::path task_dir = self.at("dir").get<std::string>();
  std::optional<executor::RunAs> run_as;
  if (plan.contains("run_as")) {
    TY_ASSIGN_OR_RETURN(run_as, executor::RunAsFromJson(plan["run_as"]));
  }
  TY_RETURN_IF_ERROR(MakeDirs(task_dir));  // the supervisor's, not the replica's
  TY_RETURN_IF_ERROR(executor::PrepareReplicaDirs(work, in, run_as));
  executor::ReplicaLaunch launch;
  launch.pool_index = self.at("pool").get<int>();
  launch.replica_index = self.at("replica").get<int>();
  for (const auto& a : self.at("argv")) launch.argv.push_back(a.get<std::string>());
  launch.env = TaskEnv(plan, self, in, !image.empty(), run_as);
  // A job submitted as the replica's user (--slurm-projects "user") already runs as it: nothing
  // to switch, and a process that is not root could not setgroups anyway.
  if (run_as && ::geteuid() != 0 && run_as->uid == ::geteuid()) {
    launch.run_as = std::nullopt;
  } else {
    launch.run_as = run_as;
  }
  launch.work_dir = work;
  launch.log_dir = task_dir / "log";
  launch.log_limits.segment_bytes = plan.value("segment_bytes", int64_t{8} << 20);
  launch.log_limits.max_segments = plan.value("max_segments", 8);
  launch.pid_file = task_dir / "pid";
  launch.status_file = task_dir / "status";
  launch.hp_metric_file = in.hp_metric_file;
  if (image.empty()) return launch;
  launch.job_id = in.job_id;
  launch.image = image;
  launch.image_field = self.value("image_field", "containerSpec.imageUri");
  if (self.contains("command") && !self["command"].is_null()) {
    launch.command = self["command"].get<std::vector<std::string>>();
  }
  if (self.contains("args") && !self["args"].is_null()) {
    launch.args = self["args"].get<std::vector<std::string>>();
  }
  launch.mounts = self.value("mounts", std::vector<std::string>{});
  // The node's pip settings, as the local executor hands a container its host's (the user's
  // env wins); no shared pip cache: the node has no data dir of the server's.
  executor::PackageIndexAccess pip =
      executor::HostPackageIndexAccess(executor::CurrentEnvironment());
  for (auto& [key, value] : pip.env) launch.env.emplace(key, std::move(value));
  for (const auto& p : pip.read_only) launch.read_only_mounts.push_back(p.string());
  launch.gpus = in.gpus;
  // The task's share of the allocation, as podman limits; never above this node (podman refuses
  // --cpus beyond the host's CPUs, and a test cluster may declare more than it has).
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  launch.cpu_limit = self.value("cpu_limit", 0.0);
  if (online > 0) launch.cpu_limit = std::min(launch.cpu_limit, static_cast<double>(online));
  launch.memory_bytes = self.value("memory_bytes", int64_t{0});
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    launch.memory_bytes = std::min<int64_t>(launch.memory_bytes, int64_t{pages} * page);
  }
  return launch;
}

// The replica could not be set up on this node (e.g. an output dir its user cannot write): a
// start-error file tells the executor, which ends the gang with that reason instead of restarting
// it (replica_runtime.h).
int StartFailed(const nlohmann::json& plan, int rank, const Status& why) {
  const fs::path pid_file =
      fs::path(plan.at("tasks").at(rank).at("dir").get<std::string>()) / "pid";
  Status written = MakeDirs(pid_file.parent_path());
  if (written.ok())
    written =
        executor::WriteStartError(pid_file, {executor::GangFailure::kStartFailed, why.message()});
  if (!written.ok()) Fail("cannot record the failure: " + written.message());
  return Fail(why.ToString());
}

// Runs the launch in the foreground of this srun task; the replica's exit code (0..255).
int RunTask(const executor::ReplicaLaunch& launch, const ContainerRuntimeFactory& make_containers,
            std::chrono::milliseconds pull_timeout, int rank) {
  executor::HostProcessRuntime host;
  executor::ReplicaRuntime* runtime = &host;
  std::unique_ptr<executor::ReplicaRuntime> containers;
  if (!launch.image.empty()) {
    if (make_containers) containers = make_containers(pull_timeout);
    if (containers == nullptr) {
      return Fail("task " + std::to_string(rank) + " names image '" + launch.image +
                  "' but this trainyard-slurm-task was built without container support");
    }
    runtime = containers.get();
  }
  int rc = runtime->RunInForeground(launch);
  if (rc != 0) return rc;
  auto exit = executor::ReadReplicaStatusFile(launch.status_file);
  if (!exit.ok()) return Fail(exit.status().ToString());
  return exit->exit_code > 255 ? 255 : exit->exit_code;
}

}  // namespace

std::chrono::milliseconds PlanPullTimeout(const nlohmann::json& plan) {
  return std::chrono::milliseconds(plan.value("pull_timeout_ms", int64_t{0}));
}

int SlurmTaskMain(int argc, char** argv, const ContainerRuntimeFactory& make_containers) {
  std::string plan_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--plan" && i + 1 < argc) {
      plan_path = argv[++i];
    } else {
      return Fail("unknown argument '" + a + "'; usage: trainyard-slurm-task --plan PLAN.json");
    }
  }
  if (plan_path.empty()) return Fail("--plan PLAN.json is required");
  auto text = ReadFile(plan_path);
  if (!text.ok()) return Fail(text.status().ToString());
  nlohmann::json plan;
  try {
    plan = ParseJsonOrThrow(*text);
  } catch (const std::exception& e) {
    return Fail("corrupt plan " + plan_path + ": " + e.what());
  }
  int rank = 0, world = 0;
  if (!ParseInt(Env("SLURM_PROCID"), &rank) || !ParseInt(Env("SLURM_NTASKS"), &world)) {
    return Fail("SLURM_PROCID / SLURM_NTASKS are not set: run me under srun");
  }
  try {
    const auto& tasks = plan.at("tasks");
    if (world != static_cast<int>(tasks.size()) || rank >= world) {
      return Fail("Slurm started " + std::to_string(world) + " tasks (this is rank " +
                  std::to_string(rank) + ") but the plan has " + std::to_string(tasks.size()));
    }
    auto addresses = Rendezvous(plan, rank, world);
    if (!addresses.ok()) return Fail(addresses.status().message());
    const executor::ReplicaEnvInput in = EnvInputOf(plan, *addresses, rank);
    auto launch = LaunchOf(plan, rank, in);
    if (!launch.ok()) return StartFailed(plan, rank, launch.status());
    // The replica runs here, in the foreground of this srun task, through the replica runtime.
    return RunTask(*launch, make_containers, PlanPullTimeout(plan), rank);
  } catch (const std::exception& e) {
    return Fail("bad plan " + plan_path + ": " + e.what());
  }
}

}  // namespace trainyard::slurm
