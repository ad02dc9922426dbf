#include "executor/host_process_runtime.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/json_parse.h"
#include "executor/exec_wrapper.h"
#include "executor/gang_record.h"
#include "executor/replica_status_file.h"

namespace trainyard::executor {
namespace fs = std::filesystem;
using Json = nlohmann::json;

StatusOr<fs::path> FindExecWrapper(const fs::path& configured) {
#ifdef TRAINYARD_EXEC_WRAPPER_BUILD_PATH
  const fs::path build_path = TRAINYARD_EXEC_WRAPPER_BUILD_PATH;
#else
  const fs::path build_path;
#endif
  return FindHelperBinary("trainyard-exec-wrapper", configured, "TRAINYARD_EXEC_WRAPPER",
                          build_path);
}

StatusOr<ProcessId> ReadPidFile(const fs::path& path) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    Json j = ParseJsonOrThrow(text);
    return ProcessId{j.at("pid").get<int64_t>(), j.value("start_ticks", uint64_t{0})};
  } catch (const std::exception& e) {
    return DataLossError("corrupt pid file " + path.string() + ": " + e.what());
  }
}

std::vector<std::string> ExecWrapperArgs(const ReplicaLaunch& l) {
  std::vector<std::string> args = {"--log-dir",       l.log_dir.string(),
                                   "--pool",          std::to_string(l.pool_index),
                                   "--replica",       std::to_string(l.replica_index),
                                   "--pid-file",      l.pid_file.string(),
                                   "--status-file",   l.status_file.string(),
                                   "--segment-bytes", std::to_string(l.log_limits.segment_bytes),
                                   "--max-segments",  std::to_string(l.log_limits.max_segments)};
  if (!l.cpus.empty()) {
    std::string list;
    for (int id : l.cpus) list += (list.empty() ? "" : ",") + std::to_string(id);
    args.insert(args.end(), {"--cpus", list});
  }
  if (!l.cgroup.empty()) args.insert(args.end(), {"--cgroup", l.cgroup.string()});
  for (const auto& dir : l.extra_cgroups) args.insert(args.end(), {"--cgroup", dir.string()});
  for (const auto& dir : l.supervisor_cgroups) {
    args.insert(args.end(), {"--supervisor-cgroup", dir.string()});
  }
  if (l.run_as) {
    std::string user = std::to_string(l.run_as->uid) + ":" + std::to_string(l.run_as->gid);
    for (size_t i = 0; i < l.run_as->groups.size(); ++i)
      user += (i == 0 ? ":" : ",") + std::to_string(l.run_as->groups[i]);
    args.insert(args.end(), {"--user", user});
  }
  args.push_back("--");
  args.insert(args.end(), l.argv.begin(), l.argv.end());
  return args;
}

HostProcessRuntime::HostProcessRuntime(fs::path wrapper_path, ProcessOps* ops)
    : wrapper_path_(std::move(wrapper_path)), ops_(ops ? *ops : ProcessOps::Real()) {}

Status HostProcessRuntime::CheckAvailable() const {
  // A missing wrapper is a broken installation, not a bad job: FAILED_PRECONDITION.
  auto wrapper = FindExecWrapper(wrapper_path_);
  if (!wrapper.ok()) return FailedPreconditionError(wrapper.status().message());
  return Status::Ok();
}

StatusOr<ReplicaHandle> HostProcessRuntime::Start(const ReplicaLaunch& launch) {
  auto wrapper = FindExecWrapper(wrapper_path_);
  if (!wrapper.ok()) return FailedPreconditionError(wrapper.status().message());
  LaunchRequest req;
  req.env = launch.env;
  req.cwd = launch.work_dir;
  req.output_file = launch.output_file;
  req.argv = {fs::absolute(*wrapper).string()};
  for (auto& a : ExecWrapperArgs(launch)) req.argv.push_back(std::move(a));
  TY_ASSIGN_OR_RETURN(ProcessId supervisor, ops_.Launch(req));
  return ReplicaHandle{supervisor, {}, launch.pid_file, launch.status_file, {}};
}

int HostProcessRuntime::RunInForeground(const ReplicaLaunch& launch) {
  if (::chdir(launch.work_dir.c_str()) != 0) {
    std::fprintf(stderr, "cannot enter work dir %s\n", launch.work_dir.c_str());
    return 2;
  }
  ::clearenv();
  for (const auto& [k, v] : launch.env) ::setenv(k.c_str(), v.c_str(), 1);
  std::vector<std::string> args = {"trainyard-exec-wrapper"};
  for (auto& a : ExecWrapperArgs(launch)) args.push_back(std::move(a));
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  return ExecWrapperMain(static_cast<int>(args.size()), cargs.data());
}

ReplicaObservation HostProcessRuntime::Observe(ReplicaHandle* h) {
  if (!h->process.valid()) {
    if (auto pid = ReadPidFile(h->pid_file); pid.ok()) h->process = *pid;
  }
  auto exit = ReadReplicaStatusFile(h->status_file);
  if (!exit.ok() && !ops_.IsAlive(h->supervisor) && !ops_.IsAlive(h->process)) {
    exit = ReadReplicaStatusFile(h->status_file);  // it may have been written just before the exit
    if (!exit.ok()) {
      return {ReplicaObservation::Phase::kLost, 0,
              "ended without a recorded exit code (its supervisor, pid " +
                  std::to_string(h->supervisor.pid) + ", is gone: " + exit.status().message() +
                  ")"};
    }
  }
  if (exit.ok()) {
    ReplicaObservation seen{ReplicaObservation::Phase::kExited, exit->exit_code};
    seen.end_time = ExitTimeOf(*exit);
    return seen;
  }
  return {};
}

bool HostProcessRuntime::Terminate(const ReplicaHandle& h) {
  // The wrapper forwards SIGTERM to the replica's process group; if the wrapper is gone, signal
  // the group directly.
  return ops_.Signal(h.supervisor, SIGTERM, /*group=*/false) ||
         ops_.Signal(h.process, SIGTERM, /*group=*/true);
}

bool HostProcessRuntime::Kill(const ReplicaHandle& h) {
  return ops_.Signal(h.process, SIGKILL, /*group=*/true) ||
         ops_.Signal(h.supervisor, SIGKILL, /*group=*/true);
}

StatusOr<int> HostProcessRuntime::OpenExitFd(const ReplicaHandle& h) {
  return ops_.OpenExitFd(h.supervisor);
}

bool HostProcessRuntime::Reap(const ReplicaHandle& h) { return ops_.Reap(h.supervisor); }

}  // namespace trainyard::executor
