#include "container/podman_engine.h"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <thread>

#include "container/image_reference.h"

namespace trainyard::container {
namespace {

namespace fs = std::filesystem;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool ContainsAny(const std::string& haystack, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return haystack.find(n) != std::string::npos; });
}

bool NoSuchContainer(const std::string& err) {
  return ContainsAny(Lower(err), {"no such container", "no container with name or id"});
}

std::string FormatCpus(double cpus) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", cpus);
  return buf;
}

// podman reports a zero time for a container that never started or has not finished.
std::string TimeOrEmpty(const std::string& t) { return t.starts_with("0001-01-01") ? "" : t; }

class PodmanLogFollower : public LogFollower {
 public:
  explicit PodmanLogFollower(std::unique_ptr<BackgroundCommand> command)
      : command_(std::move(command)) {}
  bool Done() override { return command_->Done(); }
  bool Wait(std::chrono::milliseconds timeout) override { return command_->Wait(timeout); }
  void Stop() override { command_->Terminate(); }

 private:
  std::unique_ptr<BackgroundCommand> command_;
};

}  // namespace

std::vector<std::string> PodmanRunArgs(const ContainerSpec& spec, const PodmanRuntime& runtime,
                                       const GpuAccess& gpus) {
  std::vector<std::string> a{"run", "--detach", "--name", spec.name};
  if (spec.replace_existing) a.push_back("--replace");
  // The image is pulled before (Pull, with its progress, timeout and retries) or found present:
  // a run pulls only when RunPullingMissing says so, and an image missing here is "image not
  // known" (NOT_FOUND).
  a.push_back("--pull=never");
  // Host networking: MASTER_ADDR:MASTER_PORT and the other replicas' addresses are host ports.
  a.insert(a.end(), {"--network", "host"});
  if (!runtime.runtime.empty()) a.insert(a.end(), {"--runtime", runtime.runtime});
  for (const auto& u : runtime.ulimits) a.insert(a.end(), {"--ulimit", u});
  // conmon writes the log itself, so output survives a server restart (podman logs reads it).
  a.insert(a.end(), {"--log-driver", "k8s-file"});
  if (!spec.log_path.empty()) a.insert(a.end(), {"--log-opt", "path=" + spec.log_path.string()});
  if (!spec.conmon_pidfile.empty()) {
    a.insert(a.end(), {"--conmon-pidfile", spec.conmon_pidfile.string()});
  }
  a.insert(a.end(), {"--label", std::string(kJobLabel) + "=" + spec.job_id});
  a.insert(a.end(), {"--label", std::string(kPoolLabel) + "=" + std::to_string(spec.pool_index)});
  a.insert(a.end(),
           {"--label", std::string(kReplicaLabel) + "=" + std::to_string(spec.replica_index)});
  if (spec.cpus > 0) a.insert(a.end(), {"--cpus", FormatCpus(spec.cpus)});
  if (spec.memory_bytes > 0) {
    // --memory-swap equal to --memory: no swap beyond the limit, so the limit is what OOM-kills.
    std::string bytes = std::to_string(spec.memory_bytes) + "b";
    a.insert(a.end(), {"--memory", bytes, "--memory-swap", bytes});
  }
  if (spec.uid && spec.gid) {
    a.insert(a.end(), {"--user", std::to_string(*spec.uid) + ":" + std::to_string(*spec.gid)});
    for (uint32_t g : spec.groups) a.insert(a.end(), {"--group-add", std::to_string(g)});
  }
  std::map<std::string, std::string> env = spec.env;
  if (!spec.bucket_root.empty()) {
    a.insert(a.end(), {"--volume", spec.bucket_root.string() + ":" + std::string(kGcsMountPoint)});
    env = ContainerEnv(std::move(env));
  }
  if (!spec.hp_metric_file.empty()) {
    std::string dir = spec.hp_metric_file.parent_path().string();
    a.insert(a.end(), {"--volume", dir + ":" + dir});
  }
  for (const auto& m : spec.extra_mounts)
    a.insert(a.end(), {"--volume", m.string() + ":" + m.string()});
  for (const auto& m : spec.read_only_mounts)
    a.insert(a.end(), {"--volume", m.string() + ":" + m.string() + ":ro"});
  for (const auto& d : gpus.devices) a.insert(a.end(), {"--device", d});
  if (!gpus.devices.empty()) env["CUDA_VISIBLE_DEVICES"] = gpus.cuda_visible_devices;
  for (const auto& [key, value] : env) a.insert(a.end(), {"--env", key + "=" + value});
  if (spec.command && !spec.command->empty()) {
    // The JSON form replaces the whole ENTRYPOINT (and, as in Docker, drops the image's CMD).
    a.insert(a.end(), {"--entrypoint", nlohmann::json(*spec.command).dump()});
  }
  a.push_back(spec.image);
  if (spec.args) a.insert(a.end(), spec.args->begin(), spec.args->end());
  return a;
}

Status PullError(const std::string& image, const std::string& podman_stderr, int exit_code) {
  std::string line = LastNonEmptyLine(podman_stderr);
  std::string low = Lower(podman_stderr);
  std::string prefix = "pulling image '" + image + "' failed: ";
  if (ContainsAny(low, {"http response to https client"})) {
    return FailedPreconditionError(
        prefix + line +
        "; the registry speaks plain HTTP: mark it insecure in "
        "/etc/containers/registries.conf.d/ (scripts/registry-local.sh start does this for the "
        "local registry)");
  }
  if (ContainsAny(low, {"manifest unknown", "name unknown", "not found", "no such image",
                        "repository does not exist"})) {
    return NotFoundError(prefix + "no such image in its registry (" + line +
                         "); push it first (podman push) or check the name and tag");
  }
  if (ContainsAny(low, {"connection refused", "no such host", "i/o timeout", "dial tcp",
                        "network is unreachable", "no route to host", "handshake timeout",
                        "connection reset"})) {
    return UnavailableError(prefix + "its registry is unreachable (" + line +
                            "); is the registry running (scripts/registry-local.sh start)?");
  }
  if (ContainsAny(low, {"unauthorized", "authentication required", "denied"})) {
    return Status(StatusCode::kPermissionDenied,
                  prefix + line + "; log in first: podman login REGISTRY");
  }
  return Status(StatusCode::kUnknown,
                prefix + "podman exited with " + std::to_string(exit_code) + ": " + line);
}

std::string RegistryOf(const std::string& image) {
  auto ref = ParseImageReference(image);
  if (!ref.ok() || ref->domain.empty()) return "docker.io";
  return ref->domain;
}

PodmanEngine::PodmanEngine(CommandRunner& runner, PodmanOptions options, PodmanRuntime runtime)
    : runner_(runner), options_(std::move(options)), runtime_(std::move(runtime)) {}

StatusOr<std::unique_ptr<PodmanEngine>> PodmanEngine::Create(PodmanOptions options) {
  CommandRunner& runner = CommandRunner::Real();
  TY_ASSIGN_OR_RETURN(PodmanRuntime runtime, DetectPodmanRuntime(runner, options));
  return std::make_unique<PodmanEngine>(runner, std::move(options), std::move(runtime));
}

std::vector<std::string> PodmanEngine::Argv(std::vector<std::string> args) const {
  std::vector<std::string> argv{options_.podman};
  argv.insert(argv.end(), options_.global_args.begin(), options_.global_args.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

StatusOr<CommandResult> PodmanEngine::RunChecked(std::vector<std::string> args,
                                                 std::string_view what) {
  TY_ASSIGN_OR_RETURN(CommandResult r,
                      runner_.Run(Argv(std::move(args)), options_.command_timeout));
  if (r.exit_code != 0) {
    if (NoSuchContainer(r.err)) return NotFoundError(std::string(what) + ": no such container");
    return Status(StatusCode::kUnknown, std::string(what) + ": podman exited with " +
                                            std::to_string(r.exit_code) + ": " +
                                            LastNonEmptyLine(r.err));
  }
  return r;
}

bool PodmanEngine::ImagePresent(const std::string& image) {
  auto exists = runner_.Run(Argv({"image", "exists", image}), options_.command_timeout);
  return exists.ok() && exists->exit_code == 0;
}

Status PodmanEngine::PullOnce(const std::string& image, std::chrono::milliseconds timeout,
                              const LineSink& progress) {
  auto r = runner_.Run(Argv({"pull", image}), timeout, progress);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kDeadlineExceeded) {
      return DeadlineExceededError("pulling image '" + image + "': no answer within " +
                                   std::to_string((timeout.count() + 999) / 1000) + " s");
    }
    return r.status().WithPrefix("pulling image '" + image + "'");
  }
  if (r->exit_code != 0) return PullError(image, r->err, r->exit_code);
  return Status::Ok();
}

namespace {

// Waits `wait` in small steps; false when options.interrupted said stop.
bool WaitToRetry(const PodmanOptions& options, std::chrono::milliseconds wait) {
  using std::chrono::milliseconds;
  const auto until = std::chrono::steady_clock::now() + wait;
  for (auto now = std::chrono::steady_clock::now(); now < until;
       now = std::chrono::steady_clock::now()) {
    if (options.interrupted && options.interrupted()) return false;
    std::this_thread::sleep_for(
        std::min(milliseconds(100), std::chrono::duration_cast<milliseconds>(until - now)));
  }
  return !(options.interrupted && options.interrupted());
}

// The one wording of a pull that failed for good (Pull's retries, or a pulling run that hung):
// the image, its registry, how long it took, the attempts and the deadline, then why.
Status PullFailed(StatusCode code, const std::string& image, std::chrono::milliseconds took,
                  int attempts, std::chrono::milliseconds deadline, const std::string& why) {
  return Status(code, "image '" + image + "' could not be pulled from registry " +
                          RegistryOf(image) + " in " + std::to_string(took.count() / 1000) +
                          " s (" + std::to_string(attempts) + " attempt" +
                          (attempts == 1 ? "" : "s") + ", deadline " +
                          std::to_string(deadline.count() / 1000) + " s): " + why);
}

}  // namespace

Status PodmanEngine::Pull(const std::string& image, PullPolicy policy, const LineSink& progress) {
  if (policy == PullPolicy::kMissing) {
    if (ImagePresent(image)) {
      if (progress) progress("image " + image + " is present locally; not pulling");
      return Status::Ok();
    }
  }
  using std::chrono::milliseconds;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + options_.pull_timeout;
  milliseconds wait = options_.pull_retry_initial;
  Status last;
  int attempts = 0;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (progress) {
      progress("pulling image " + image +
               (attempts == 0 ? "" : " (attempt " + std::to_string(attempts + 1) + ")"));
    }
    ++attempts;
    last = PullOnce(image, std::max(left, milliseconds(1)), progress);
    if (last.ok() || last.code() != StatusCode::kUnavailable) break;
    if (std::chrono::steady_clock::now() + wait >= deadline) break;
    if (progress) {
      progress("registry " + RegistryOf(image) + " unreachable; trying again in " +
               std::to_string(wait.count() / 1000) + " s");
    }
    if (!WaitToRetry(options_, wait)) {
      return CancelledError("pulling image '" + image + "' stopped");
    }
    wait = std::min(wait * 2, options_.pull_retry_max);
  }
  if (last.ok() ||
      (last.code() != StatusCode::kUnavailable && last.code() != StatusCode::kDeadlineExceeded)) {
    return last;
  }
  return PullFailed(
      last.code(), image,
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start), attempts,
      options_.pull_timeout, last.message());
}

Status PodmanEngine::Run(const ContainerSpec& spec) {
  return RunContainer(spec, /*pull_missing=*/false, options_.command_timeout, nullptr);
}

Status PodmanEngine::RunPullingMissing(const ContainerSpec& spec, const LineSink& progress) {
  // The pull's deadline, as Pull's: the run's own steps after the pull take well under a second.
  return RunContainer(spec, /*pull_missing=*/true, options_.pull_timeout, progress);
}

Status PodmanEngine::RunContainer(const ContainerSpec& spec, bool pull_missing,
                                  std::chrono::milliseconds timeout, const LineSink& progress) {
  if (spec.name.empty() || spec.image.empty()) {
    return InvalidArgumentError("container spec needs a name and an image");
  }
  TY_ASSIGN_OR_RETURN(GpuAccess gpus,
                      ResolveGpuAccess(spec.gpus, options_.cdi_dirs, options_.dev_dir));
  std::error_code ec;
  // A bind mount of a missing host directory fails the whole run; make the mount points.
  if (!spec.bucket_root.empty()) fs::create_directories(spec.bucket_root, ec);
  if (!spec.hp_metric_file.empty()) fs::create_directories(spec.hp_metric_file.parent_path(), ec);
  std::vector<std::string> args = PodmanRunArgs(spec, runtime_, gpus);
  if (pull_missing)
    std::replace(args.begin(), args.end(), std::string("--pull=never"),
                 std::string("--pull=missing"));
  auto r = runner_.Run(Argv(std::move(args)), timeout, progress);
  if (r.ok() && r->exit_code == 0) return Status::Ok();
  std::string err = r.ok() ? r->err : r.status().message();
  std::string low = Lower(err);
  if (low.find("already in use") != std::string::npos) {
    return AlreadyExistsError("container " + spec.name +
                              " already exists; remove it first or start with replace_existing");
  }
  std::string line = "container " + spec.name + " (image " + spec.image +
                     ") did not start: " + LastNonEmptyLine(err);
  // podman looks the image up before it creates anything: a run that found no image left no
  // container (one podman call fewer on a cold start).
  const bool image_missing = pull_missing
                                 ? !ImagePresent(spec.image)
                                 : r.ok() && ContainsAny(low, {"image not known", "no such image"});
  if (image_missing && !r.ok() && r.status().code() == StatusCode::kDeadlineExceeded) {
    // A pull that hung its whole deadline is not tried again.
    return PullFailed(StatusCode::kDeadlineExceeded, spec.image, timeout, 1, timeout,
                      "podman run --pull=missing gave no answer within " +
                          std::to_string(timeout.count() / 1000) + " s");
  }
  if (image_missing) return NotFoundError(line + "; pull the image first");
  // A failed start can leave a created container behind; nothing may leak.
  (void)runner_.Run(Argv({"rm", "--force", "--volumes", "--time", "0", spec.name}),
                    options_.command_timeout);
  // DEADLINE_EXCEEDED of a pulling run means its pull hung (above); one that hung after the image
  // was there is a start that did not finish.
  if (!r.ok()) {
    return Status(pull_missing && r.status().code() == StatusCode::kDeadlineExceeded
                      ? StatusCode::kUnknown
                      : r.status().code(),
                  line);
  }
  if (ContainsAny(low, {"executable file not found", "no such file or directory"}) &&
      (r->exit_code == 126 || r->exit_code == 127)) {
    return InvalidArgumentError(line + "; check containerSpec.command and the image's ENTRYPOINT");
  }
  return Status(StatusCode::kUnknown, line);
}

StatusOr<ContainerState> PodmanEngine::Inspect(const std::string& name) {
  TY_ASSIGN_OR_RETURN(CommandResult r,
                      runner_.Run(Argv({"container", "inspect", name}), options_.command_timeout));
  ContainerState state;
  if (r.exit_code != 0) {
    if (NoSuchContainer(r.err)) return state;
    return Status(StatusCode::kUnknown,
                  "podman container inspect " + name + ": " + LastNonEmptyLine(r.err));
  }
  try {
    auto all = nlohmann::json::parse(r.out);
    if (!all.is_array() || all.empty()) return state;
    state.id = all[0].value("Id", "");
    const auto& s = all[0].at("State");
    std::string status = s.value("Status", "");
    if (status == "running" || status == "paused" || status == "stopping") {
      state.status = ContainerStatus::kRunning;
    } else if (status == "exited" || status == "stopped") {
      state.status = ContainerStatus::kExited;
    } else {
      state.status = ContainerStatus::kCreated;
    }
    state.exit_code = state.status == ContainerStatus::kExited ? s.value("ExitCode", -1) : -1;
    state.oom_killed = s.value("OOMKilled", false);
    state.pid = s.value("Pid", int64_t{0});
    state.conmon_pid = s.value("ConmonPid", int64_t{0});
    state.started_at = TimeOrEmpty(s.value("StartedAt", ""));
    state.finished_at = TimeOrEmpty(s.value("FinishedAt", ""));
  } catch (const nlohmann::json::exception& e) {
    return InternalError("cannot read `podman container inspect " + name + "`: " + e.what());
  }
  return state;
}

Status PodmanEngine::Signal(const std::string& name, int signal) {
  TY_ASSIGN_OR_RETURN(CommandResult r,
                      runner_.Run(Argv({"kill", "--signal", std::to_string(signal), name}),
                                  options_.command_timeout));
  if (r.exit_code == 0) return Status::Ok();
  if (NoSuchContainer(r.err)) return NotFoundError("container " + name + ": no such container");
  // Not running any more: nothing to signal, which is what the caller wanted.
  if (Lower(r.err).find("state improper") != std::string::npos) return Status::Ok();
  return Status(StatusCode::kUnknown, "podman kill " + name + ": " + LastNonEmptyLine(r.err));
}

Status PodmanEngine::Stop(const std::string& name, std::chrono::milliseconds grace) {
  TY_ASSIGN_OR_RETURN(ContainerState state, Inspect(name));
  if (state.status != ContainerStatus::kRunning) return Status::Ok();
  TY_RETURN_IF_ERROR(Signal(name, SIGTERM));
  auto waited = Wait(name, grace);
  if (waited.ok()) return Status::Ok();
  if (waited.status().code() != StatusCode::kDeadlineExceeded) return waited.status();
  TY_RETURN_IF_ERROR(Signal(name, SIGKILL));
  auto killed = Wait(name, options_.command_timeout);
  return killed.ok() ? Status::Ok() : killed.status();
}

StatusOr<ContainerState> PodmanEngine::Wait(const std::string& name,
                                            std::chrono::milliseconds timeout) {
  auto r = runner_.Run(Argv({"wait", name}), timeout);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kDeadlineExceeded) {
      return DeadlineExceededError("container " + name + " still runs after " +
                                   std::to_string(timeout.count()) + " ms");
    }
    return r.status();
  }
  if (r->exit_code != 0) {
    if (NoSuchContainer(r->err)) return NotFoundError("container " + name + ": no such container");
    return Status(StatusCode::kUnknown, "podman wait " + name + ": " + LastNonEmptyLine(r->err));
  }
  return Inspect(name);
}

StatusOr<std::unique_ptr<LogFollower>> PodmanEngine::FollowLogs(const std::string& name,
                                                                const fs::path& output_file,
                                                                const std::string& since) {
  std::vector<std::string> args{"logs", "--follow"};
  if (!since.empty()) args.insert(args.end(), {"--since", since});
  args.push_back(name);
  TY_ASSIGN_OR_RETURN(auto command, runner_.Start(Argv(std::move(args)), output_file));
  return std::unique_ptr<LogFollower>(new PodmanLogFollower(std::move(command)));
}

Status PodmanEngine::Remove(const std::string& name) {
  auto r = RunChecked({"rm", "--force", "--volumes", "--time", "0", name}, "podman rm " + name);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  return Status::Ok();
}

StatusOr<std::vector<std::string>> PodmanEngine::ListJob(const std::string& job_id) {
  TY_ASSIGN_OR_RETURN(CommandResult r, RunChecked({"ps", "--all", "--filter",
                                                   "label=" + std::string(kJobLabel) + "=" + job_id,
                                                   "--format", "{{.Names}}"},
                                                  "podman ps"));
  std::vector<std::string> names;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) names.push_back(line);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace trainyard::container
