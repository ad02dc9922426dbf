// Finding out, once at server start, how podman can run containers on this host.
//
// Podman's defaults do not work everywhere. On Debian 12 CI machines (hybrid cgroup v1/v2, no
// CAP_SYS_RESOURCE) the default OCI runtime crun refuses hybrid cgroups, and podman's default
// rlimits (nofile=1048576) are above the hard limits the server may raise to, so every container
// fails with "setrlimit RLIMIT_NOFILE: Operation not permitted" (docs/containers.md). So
// DetectPodmanRuntime runs a probe container (a throw-away root filesystem holding /bin/true and
// its libraries, `podman run --rootfs`) with each candidate setting, in order:
//   1. podman's default runtime, with rlimits that fit this process's hard limits;
//   2. `--runtime runc` with the same rlimits, when the default is not runc;
// and keeps the first that works. When none does it fails with every attempt's error and what to
// configure. Each podman call has a timeout, so a wedged podman fails start-up instead of hanging.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/command_runner.h"
#include "common/status.h"

namespace trainyard::container {

struct PodmanOptions {
  std::string podman = "podman";
  // Inserted before every subcommand, e.g. {"--root", DIR, "--runroot", DIR} for private storage.
  std::vector<std::string> global_args;
  std::chrono::milliseconds command_timeout{60000};  // every podman call but pull
  // A pull's deadline, all attempts together. A pull that fails because the registry cannot be
  // reached (UNAVAILABLE) is tried again after pull_retry_initial, doubling up to
  // pull_retry_max, while the deadline allows; other failures (no such image, authentication)
  // are final at once.
  std::chrono::milliseconds pull_timeout{900000};
  std::chrono::milliseconds pull_retry_initial{2000};
  std::chrono::milliseconds pull_retry_max{60000};
  // Polled while waiting to retry: true ends the pull (CANCELLED). Null: never.
  std::function<bool()> interrupted;
  std::vector<std::filesystem::path> cdi_dirs{"/etc/cdi", "/var/run/cdi"};
  std::filesystem::path dev_dir = "/dev";
};

// What every `podman run` of this host needs; from DetectPodmanRuntime.
struct PodmanRuntime {
  std::string runtime;               // value for --runtime; empty: podman's default works
  std::vector<std::string> ulimits;  // values for --ulimit ("nofile=20000:20000")
  bool rootless = false;
  std::string summary;  // one line for the server log: runtime, cgroups, rootless, ulimits
};

// The calling process's limits that bound a container's rlimits.
struct HostLimits {
  uint64_t nofile_hard = 0;
  uint64_t nproc_hard = 0;
  bool cap_sys_resource = false;  // may raise hard limits
  static HostLimits Current();
};

// --ulimit values that fit `limits`: none when the process may raise limits; else nofile at the
// hard limit (at most 1048576, podman's default) and nproc at min(hard, 32768) (podman lowers the
// OCI runtime's own nproc hard limit to 32768).
std::vector<std::string> FittingUlimits(const HostLimits& limits);

// Builds a probe root filesystem in `dir` (created): /true and the shared libraries `ldd` lists
// for /bin/true. UNAVAILABLE if they cannot be copied.
Status MakeProbeRootfs(CommandRunner& runner, const std::filesystem::path& dir);

// Detects the runtime as described above, probing with the root filesystem in `probe_rootfs`.
// FAILED_PRECONDITION when podman is missing or broken (`podman info` fails) or no candidate can
// run the probe; the message quotes podman and says what to install or configure.
StatusOr<PodmanRuntime> DetectPodmanRuntime(CommandRunner& runner, const PodmanOptions& options,
                                            const HostLimits& limits,
                                            const std::filesystem::path& probe_rootfs);

// The same with this process's limits and a probe root filesystem in a temporary directory.
StatusOr<PodmanRuntime> DetectPodmanRuntime(CommandRunner& runner, const PodmanOptions& options);

}  // namespace trainyard::container
