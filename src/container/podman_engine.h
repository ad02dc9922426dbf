// PodmanEngine: ContainerEngine over the podman command line (Debian 12's podman 4.3).
//
// Every replica is one detached container (`podman run --detach --network host`), with the
// runtime and rlimits DetectPodmanRuntime found, logged by conmon (k8s-file) so its output
// survives a server restart, and followed by `podman logs --follow` into the replica's log file.
// State comes from `podman inspect` (exit code, OOMKilled, PID 1, conmon PID); signals from
// `podman kill --signal` (they reach PID 1, the entrypoint, as on Vertex).
//
// Thread-safety: all methods may be called from any thread (podman serialises on its own locks).
#pragma once

#include <memory>

#include "common/command_runner.h"
#include "container/container_engine.h"
#include "container/gpu_devices.h"
#include "container/podman_runtime.h"

namespace trainyard::container {

// The arguments after `podman [global args]` that start `spec` (pure, for tests and the engine).
std::vector<std::string> PodmanRunArgs(const ContainerSpec& spec, const PodmanRuntime& runtime,
                                       const GpuAccess& gpus);

// Turns a failed `podman pull` into a Status naming `image`: NOT_FOUND, UNAVAILABLE,
// PERMISSION_DENIED, FAILED_PRECONDITION (HTTP registry not marked insecure) or UNKNOWN, each
// with podman's last error line and the fix where there is one.
Status PullError(const std::string& image, const std::string& podman_stderr, int exit_code);

// The registry a fully qualified reference is pulled from ("127.0.0.1:5000"; "docker.io" when the
// reference names none).
std::string RegistryOf(const std::string& image);

class PodmanEngine : public ContainerEngine {
 public:
  // `runner` must outlive the engine.
  PodmanEngine(CommandRunner& runner, PodmanOptions options, PodmanRuntime runtime);

  // Detects the runtime (DetectPodmanRuntime) with the real command runner; its errors as is.
  static StatusOr<std::unique_ptr<PodmanEngine>> Create(PodmanOptions options = {});

  const PodmanRuntime& runtime() const { return runtime_; }

  // Tries a registry that cannot be reached again until PodmanOptions::pull_timeout
  // (podman_runtime.h); the final error names the image, the registry, the attempts and podman's
  // last error.
  Status Pull(const std::string& image, PullPolicy policy, const LineSink& progress) override;
  Status Run(const ContainerSpec& spec) override;
  // Run, with podman pulling the image in the same call when it is not in local storage
  // (`--pull=missing`: a cold start costs one podman invocation, as `podman run` alone does), its
  // stderr lines (the pull's progress) to `progress`, within the pull timeout. When the run fails
  // and the image is still not present, the pull is what failed: NOT_FOUND naming the image and
  // podman's last line, no container left (then Pull, which retries and classifies, and Run);
  // DEADLINE_EXCEEDED only when that pull hung the whole timeout (a run that hung once the image
  // was there is UNKNOWN, naming the container). Otherwise Run's errors.
  Status RunPullingMissing(const ContainerSpec& spec, const LineSink& progress);
  StatusOr<ContainerState> Inspect(const std::string& name) override;
  Status Signal(const std::string& name, int signal) override;
  Status Stop(const std::string& name, std::chrono::milliseconds grace) override;
  StatusOr<ContainerState> Wait(const std::string& name,
                                std::chrono::milliseconds timeout) override;
  StatusOr<std::unique_ptr<LogFollower>> FollowLogs(const std::string& name,
                                                    const std::filesystem::path& output_file,
                                                    const std::string& since) override;
  Status Remove(const std::string& name) override;
  StatusOr<std::vector<std::string>> ListJob(const std::string& job_id) override;

 private:
  // `podman image exists`; false also when podman cannot tell.
  bool ImagePresent(const std::string& image);
  Status PullOnce(const std::string& image, std::chrono::milliseconds timeout,
                  const LineSink& progress);
  std::vector<std::string> Argv(std::vector<std::string> args) const;
  // Run and RunPullingMissing: `pull_missing` lets the run pull (with `timeout` and `progress`).
  Status RunContainer(const ContainerSpec& spec, bool pull_missing,
                      std::chrono::milliseconds timeout, const LineSink& progress);
  // Runs podman with the command timeout; a non-zero exit becomes an error with podman's message.
  StatusOr<CommandResult> RunChecked(std::vector<std::string> args, std::string_view what);

  CommandRunner& runner_;
  PodmanOptions options_;
  PodmanRuntime runtime_;
};

}  // namespace trainyard::container
