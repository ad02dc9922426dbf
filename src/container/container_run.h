// trainyard-container-run: runs one replica attempt as a container and stays with it until it
// ends. PodmanReplicaRuntime starts it under trainyard-exec-wrapper (executor/exec_wrapper.h),
// which owns the job log, the pid file and the status file, so a container replica keeps the
// same contract as a host process (executor/replica_runtime.h):
//
//   trainyard-container-run --spec FILE
//
// FILE (ContainerRunSpec as JSON, written by the runtime) says which podman to use, the image to
// pull and the container to run. The program
//   1. pulls the image (PullPolicy), podman's progress lines on stderr (-> the job log);
//   2. runs the container detached (`podman run --detach --replace`, ContainerSpec), as the
//      subreaper of what podman starts: conmon (and PID 1, should conmon die) are its children,
//      so the container stays in the process tree of what runs this program (a Slurm step);
//   3. follows its output (`podman logs --follow`, in a process group of its own so a forwarded
//      SIGTERM does not end it; started again from where it died if something signals it
//      anyway, as Slurm does to every process of a step) onto its own stdout/stderr (-> the
//      job log);
//   4. on SIGTERM/SIGINT/SIGHUP sends that signal to the container's PID 1 (podman kill), so the
//      entrypoint's handlers run; SIGKILL comes from the executor (`podman kill --signal 9`);
//   5. when the container has exited and its output is drained, removes the container and exits
//      with the container's exit code (128+N when killed by signal N; 137 for SIGKILL and OOM;
//      PID 1's own status when conmon died before recording it; 255 when nobody has it).
// An image that cannot be pulled, or a container that cannot be started, writes the spec's
// error_file ({"failure":"IMAGE_UNAVAILABLE"|"START_FAILED","message":"..."}) atomically and exits
// 125 (podman's own "the engine failed" code); the runtime turns that into a failed start the
// executor does not retry. Killed by a signal before the container started: exits 128+N.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "common/status.h"
#include "container/container_engine.h"
#include "container/podman_runtime.h"

namespace trainyard::container {

struct ContainerRunSpec {
  PodmanOptions podman;
  PodmanRuntime runtime;
  std::string requested_image;  // as the job named it, for messages
  PullPolicy pull = PullPolicy::kMissing;
  ContainerSpec container;  // container.image: the resolved reference to pull and run
  std::filesystem::path error_file;
};

// Exit code of trainyard-container-run when the container never ran (error_file written).
inline constexpr int kContainerStartFailedExit = 125;

// The spec as JSON text and back. INVALID_ARGUMENT naming the key for a malformed document.
std::string ContainerRunSpecToJson(const ContainerRunSpec& spec);
StatusOr<ContainerRunSpec> ContainerRunSpecFromJson(const std::string& text);

// What error_file holds.
struct ContainerStartError {
  std::string failure;  // "IMAGE_UNAVAILABLE" or "START_FAILED"
  std::string message;
};
Status WriteContainerStartError(const std::filesystem::path& path,
                                const ContainerStartError& error);
// NOT_FOUND when there is none (the container started), DATA_LOSS when it is corrupt.
StatusOr<ContainerStartError> ReadContainerStartError(const std::filesystem::path& path);

// The program above; returns its exit code.
int ContainerRunMain(int argc, char** argv);

}  // namespace trainyard::container
