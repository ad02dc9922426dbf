#include "container/podman_replica_runtime.h"

#include <signal.h>

#include <cstdlib>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "container/container_run.h"
#include "container/podman_engine.h"
#include "container/podman_probe_cache.h"
#include "executor/gang_record.h"
#include "executor/replica_env.h"

namespace trainyard::container {
namespace fs = std::filesystem;
using executor::ReplicaHandle;
using executor::ReplicaLaunch;
using executor::ReplicaObservation;

namespace {

fs::path SiblingOf(const fs::path& pid_file, const std::string& suffix) {
  return pid_file.parent_path() / (pid_file.stem().string() + suffix);
}

}  // namespace

std::string RegistryOrEnv(const std::string& configured) {
  if (!configured.empty()) return configured;
  const char* env = std::getenv("TRAINYARD_REGISTRY");
  return env ? env : "";
}

StatusOr<fs::path> FindContainerRunHelper(const fs::path& configured) {
#ifdef TRAINYARD_CONTAINER_RUN_BUILD_PATH
  const fs::path build_path = TRAINYARD_CONTAINER_RUN_BUILD_PATH;
#else
  const fs::path build_path;
#endif
  return executor::FindHelperBinary("trainyard-container-run", configured,
                                    "TRAINYARD_CONTAINER_RUN", build_path);
}

fs::path ContainerRunSpecFile(const fs::path& pid_file) {
  return SiblingOf(pid_file, ".container.json");
}
fs::path ContainerErrorFile(const fs::path& pid_file) { return executor::StartErrorFile(pid_file); }

PullPolicy PullPolicyFor(const std::string& qualified_image) {
  if (qualified_image.find('@') != std::string::npos) return PullPolicy::kMissing;
  // podman's name for images that exist only in local storage (built, never pushed).
  if (qualified_image.starts_with("localhost/")) return PullPolicy::kMissing;
  return qualified_image.ends_with(":latest") ? PullPolicy::kAlways : PullPolicy::kMissing;
}

PodmanReplicaRuntime::PodmanReplicaRuntime(PodmanReplicaRuntimeOptions options)
    : options_(std::move(options)),
      resolver_(options_.rewrite_rules, RegistryOrEnv(options_.registry)),
      bucket_root_(
          fs::absolute(options_.bucket_root.empty() ? BucketRoot() : options_.bucket_root)),
      host_(options_.wrapper_path, options_.process_ops),
      runner_(options_.runner ? *options_.runner : CommandRunner::Real()) {
  if (options_.runtime) {
    probed_ = true;
    runtime_ = options_.runtime;
  }
}

Status PodmanReplicaRuntime::CheckAvailable() const {
  TY_RETURN_IF_ERROR(host_.CheckAvailable());
  if (auto helper = FindContainerRunHelper(options_.helper_path); !helper.ok()) {
    return FailedPreconditionError(helper.status().message());
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!probed_) {
    probed_ = true;
    // A probe of this host kept by an earlier server (podman_probe_cache.h), else a probe now.
    const std::filesystem::path cache = options_.runner ? "" : PodmanProbeCacheFile();
    const std::string key = PodmanProbeKey(options_.podman, HostLimits::Current());
    if (auto kept = LoadPodmanProbe(cache, key)) {
      runtime_ = *kept;
    } else if (auto detected = DetectPodmanRuntime(runner_, options_.podman); detected.ok()) {
      runtime_ = *detected;
      SavePodmanProbe(cache, key, *detected);
    } else {
      probe_status_ = FailedPreconditionError(detected.status().message());
    }
  }
  if (!probe_status_.ok()) return probe_status_;
  if (!options_.engine && !owned_engine_) {
    owned_engine_ = std::make_unique<PodmanEngine>(runner_, options_.podman, *runtime_);
  }
  return Status::Ok();
}

std::string PodmanReplicaRuntime::Summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!probed_) return "podman not probed yet (on the first job with an image)";
  if (!probe_status_.ok()) return "podman unusable: " + probe_status_.message();
  return runtime_->summary;
}

ContainerEngine* PodmanReplicaRuntime::Engine() const {
  if (options_.engine) return options_.engine;
  std::lock_guard<std::mutex> lock(mu_);
  return owned_engine_.get();
}

Status PodmanReplicaRuntime::CheckImage(const std::string& image, const std::string& field) const {
  return resolver_.Resolve(image, field).status();
}

StatusOr<ReplicaLaunch> PodmanReplicaRuntime::HelperLaunch(const ReplicaLaunch& launch,
                                                           std::string* container) {
  TY_RETURN_IF_ERROR(CheckAvailable());
  TY_ASSIGN_OR_RETURN(fs::path helper, FindContainerRunHelper(options_.helper_path));
  TY_ASSIGN_OR_RETURN(ResolvedImage image, resolver_.Resolve(launch.image, launch.image_field));
  ContainerRunSpec run;
  run.podman = options_.podman;
  {
    std::lock_guard<std::mutex> lock(mu_);
    run.runtime = *runtime_;
  }
  run.requested_image = launch.image;
  run.pull = PullPolicyFor(image.image);
  ContainerSpec& c = run.container;
  c.name = ContainerName(launch.job_id, launch.pool_index, launch.replica_index);
  c.image = image.image;
  c.job_id = launch.job_id;
  c.pool_index = launch.pool_index;
  c.replica_index = launch.replica_index;
  c.command = launch.command;
  c.args = launch.args;
  c.env = launch.env;
  c.bucket_root = bucket_root_;
  c.hp_metric_file = launch.hp_metric_file;
  c.cpus = launch.cpu_limit;
  c.memory_bytes = launch.memory_bytes;
  c.gpus = launch.gpus;
  if (launch.run_as) {
    c.uid = launch.run_as->uid;
    c.gid = launch.run_as->gid;
    c.groups = launch.run_as->groups;
  }
  for (const auto& m : launch.mounts) c.extra_mounts.push_back(m);
  for (const auto& m : launch.read_only_mounts) c.read_only_mounts.push_back(m);
  c.replace_existing = true;  // a retry or gang restart starts a fresh container
  // The supervisor follows the log and watches conmon there (no podman process on that path).
  c.log_path = SiblingOf(launch.pid_file, ".container.log");
  c.conmon_pidfile = SiblingOf(launch.pid_file, ".conmon.pid");
  run.error_file = ContainerErrorFile(launch.pid_file);
  std::error_code ec;
  fs::remove(run.error_file, ec);  // a previous server's attempt with this number
  fs::remove(c.log_path, ec);
  fs::remove(c.conmon_pidfile, ec);
  TY_RETURN_IF_ERROR(MakeDirs(launch.pid_file.parent_path()));
  fs::path spec_file = ContainerRunSpecFile(launch.pid_file);
  TY_RETURN_IF_ERROR(ReplaceFile(spec_file, ContainerRunSpecToJson(run)));

  ReplicaLaunch helper_launch = launch;
  helper_launch.argv = {helper.string(), "--spec", spec_file.string()};
  // The helper runs podman: it needs the server's environment (PATH, CONTAINERS_* settings), not
  // the replica's (that goes into the container).
  helper_launch.env = executor::CurrentEnvironment();
  helper_launch.cpus.clear();
  helper_launch.cgroup.clear();
  // The helper drives podman with the server's privileges; the container itself gets --user.
  helper_launch.run_as.reset();
  *container = c.name;
  return helper_launch;
}

StatusOr<ReplicaHandle> PodmanReplicaRuntime::Start(const ReplicaLaunch& launch) {
  std::string container;
  TY_ASSIGN_OR_RETURN(ReplicaLaunch helper_launch, HelperLaunch(launch, &container));
  TY_ASSIGN_OR_RETURN(ReplicaHandle handle, host_.Start(helper_launch));
  handle.container = container;
  return handle;
}

int PodmanReplicaRuntime::RunInForeground(const ReplicaLaunch& launch) {
  std::string container;
  auto helper_launch = HelperLaunch(launch, &container);
  if (!helper_launch.ok()) {
    std::fprintf(stderr, "%s\n", helper_launch.status().ToString().c_str());
    return 2;
  }
  return host_.RunInForeground(*helper_launch);
}

ReplicaObservation PodmanReplicaRuntime::Observe(ReplicaHandle* handle) {
  ReplicaObservation seen = host_.Observe(handle);
  if (seen.phase == ReplicaObservation::Phase::kExited) {
    auto error = executor::ReadStartError(handle->pid_file);
    if (error.ok()) {
      seen.phase = ReplicaObservation::Phase::kLost;
      seen.lost_reason = "could not be started: " + error->message;
      seen.failure = error->failure;
    }
    return seen;
  }
  if (seen.phase == ReplicaObservation::Phase::kLost && !handle->container.empty()) {
    // The supervisors are gone without an exit code, but the container may say how it ended.
    ContainerEngine* engine = Engine();
    if (engine == nullptr && CheckAvailable().ok()) engine = Engine();
    if (engine != nullptr) {
      auto state = engine->Inspect(handle->container);
      if (state.ok() && state->status == ContainerStatus::kExited) {
        (void)engine->Remove(handle->container);
        return {ReplicaObservation::Phase::kExited, state->exit_code, ""};
      }
      if (state.ok() && state->status == ContainerStatus::kRunning) {
        // Nobody follows it any more; stop it rather than leave it running unobserved.
        (void)engine->Remove(handle->container);
        seen.lost_reason += "; its container " + handle->container +
                            " was still running and "
                            "has been removed";
      }
    }
  }
  return seen;
}

bool PodmanReplicaRuntime::Terminate(const ReplicaHandle& handle) {
  // The wrapper forwards SIGTERM to trainyard-container-run, which passes it to PID 1.
  return host_.Terminate(handle);
}

bool PodmanReplicaRuntime::Kill(const ReplicaHandle& handle) {
  // SIGKILL to the container; the supervisors then drain its output, record 137 and remove it.
  // Killing the supervisors instead would leave the container running.
  ContainerEngine* engine = Engine();
  if (engine != nullptr && !handle.container.empty() &&
      engine->Signal(handle.container, SIGKILL).ok()) {
    return true;
  }
  return host_.Kill(handle);
}

StatusOr<int> PodmanReplicaRuntime::OpenExitFd(const ReplicaHandle& handle) {
  return host_.OpenExitFd(handle);
}

bool PodmanReplicaRuntime::Reap(const ReplicaHandle& handle) { return host_.Reap(handle); }

void PodmanReplicaRuntime::Release(const ReplicaHandle& handle) {
  if (handle.container.empty()) return;
  if (ContainerEngine* engine = Engine()) (void)engine->Remove(handle.container);
}

}  // namespace trainyard::container
