// PodmanReplicaRuntime: the ReplicaRuntime (executor/replica_runtime.h) that runs a replica's
// image as a podman container. Executors never depend on this file: the server's composition
// root (src/server/replica_images.cc) creates one and hands it to the executor as its
// container runtime (ExecutorConfig::container_runtime).
//
// How it keeps the runtime contract: Start() resolves the image (ImageResolver: reference
// grammar + rewrite table), writes the attempt's ContainerRunSpec next to its pid file
// (attempt-<n>.container.json) and starts `trainyard-exec-wrapper ... -- trainyard-container-run
// --spec FILE` through a HostProcessRuntime. The wrapper owns the job log, pid file and status
// file exactly as for host processes; trainyard-container-run (container_run.h) pulls, runs the
// container detached, copies its output into the log, passes SIGTERM on to the container's PID 1
// and exits with the container's exit code, removing the container. Both outlive a server
// kill -9, and conmon keeps the container itself running, so a new server re-adopts the attempt
// from its persisted handle; if the supervisors were lost but the container (found by its name,
// ContainerName) has exited, Observe() still reports its exit code.
//
// Kill() is `podman kill --signal KILL NAME` (the supervisors then record 137 and clean up);
// Release() removes the container if anything of it is left. A pull or start failure is reported
// by Observe() as kLost with GangFailure::kImageUnavailable (missing image, unreachable registry)
// or kStartFailed, and the message names the image.
//
// Podman is probed lazily, on the first CheckAvailable() (DetectPodmanRuntime: ~1 s, once), so a
// server without container jobs never runs podman.
//
// Thread-safety: as ReplicaRuntime (one executor thread at a time); CheckAvailable() and
// CheckImage() are also safe from any thread.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/command_runner.h"
#include "container/container_engine.h"
#include "container/image_reference.h"
#include "container/podman_runtime.h"
#include "executor/host_process_runtime.h"
#include "executor/replica_runtime.h"

namespace trainyard::container {

// The REGISTRY of the image rewrite table: `configured` (--registry), else $TRAINYARD_REGISTRY,
// else "" (rules that need it then fail with the fix).
std::string RegistryOrEnv(const std::string& configured);

struct PodmanReplicaRuntimeOptions {
  PodmanOptions podman;
  std::string registry;  // REGISTRY of the rewrite table; empty = $TRAINYARD_REGISTRY
  std::vector<ImageRewriteRule> rewrite_rules = DefaultImageRewriteRules();
  std::filesystem::path bucket_root;  // mounted at /gcs; empty = BucketRoot()
  // trainyard-container-run; empty = $TRAINYARD_CONTAINER_RUN, next to /proc/self/exe, the build
  // tree, then PATH.
  std::filesystem::path helper_path;
  std::filesystem::path wrapper_path;           // as HostProcessRuntime's
  executor::ProcessOps* process_ops = nullptr;  // nullptr = ProcessOps::Real()
  CommandRunner* runner = nullptr;              // nullptr = CommandRunner::Real()
  // Set: use this runtime instead of probing podman (tests, or a runtime detected elsewhere).
  std::optional<PodmanRuntime> runtime;
  // Set: use this engine for Kill/Release/Observe instead of a PodmanEngine (tests); not owned.
  ContainerEngine* engine = nullptr;
};

// The helper binary (see above); NOT_FOUND naming what was tried.
StatusOr<std::filesystem::path> FindContainerRunHelper(const std::filesystem::path& configured);

// attempt-<n>.container.json and attempt-<n>.container-error next to a handle's pid file.
std::filesystem::path ContainerRunSpecFile(const std::filesystem::path& pid_file);
std::filesystem::path ContainerErrorFile(const std::filesystem::path& pid_file);

// Vertex pulls every time; so does Kubernetes for ":latest". A tag other than latest, or a
// digest, is pulled only when missing, which keeps a warm start free of registry round trips;
// so is `localhost/...`, podman's name for images built locally and never pushed.
PullPolicy PullPolicyFor(const std::string& qualified_image);

class PodmanReplicaRuntime : public executor::ReplicaRuntime {
 public:
  explicit PodmanReplicaRuntime(PodmanReplicaRuntimeOptions options);

  std::string Name() const override { return "podman"; }
  // podman works (probed once, the result kept), and the helper and wrapper binaries exist.
  // FAILED_PRECONDITION with podman's error and what to install or configure otherwise.
  Status CheckAvailable() const override;
  Status CheckImage(const std::string& image, const std::string& field) const override;
  StatusOr<executor::ReplicaHandle> Start(const executor::ReplicaLaunch& launch) override;
  int RunInForeground(const executor::ReplicaLaunch& launch) override;
  executor::ReplicaObservation Observe(executor::ReplicaHandle* handle) override;
  bool Terminate(const executor::ReplicaHandle& handle) override;
  bool Kill(const executor::ReplicaHandle& handle) override;
  StatusOr<int> OpenExitFd(const executor::ReplicaHandle& handle) override;
  bool Reap(const executor::ReplicaHandle& handle) override;
  void Release(const executor::ReplicaHandle& handle) override;

  // One line for the server log once podman was probed ("podman runtime runc, ..."), else why not.
  std::string Summary() const;

 private:
  // The launch that runs trainyard-container-run for `launch` under the wrapper, after writing
  // its spec file. Sets *container to the container's name.
  StatusOr<executor::ReplicaLaunch> HelperLaunch(const executor::ReplicaLaunch& launch,
                                                 std::string* container);
  ContainerEngine* Engine() const;  // nullptr until podman was probed successfully

  PodmanReplicaRuntimeOptions options_;
  ImageResolver resolver_;
  std::filesystem::path bucket_root_;
  executor::HostProcessRuntime host_;
  CommandRunner& runner_;

  mutable std::mutex mu_;  // guards the probe result below
  mutable bool probed_ = false;
  mutable Status probe_status_;
  mutable std::optional<PodmanRuntime> runtime_;
  mutable std::unique_ptr<ContainerEngine> owned_engine_;
};

}  // namespace trainyard::container
