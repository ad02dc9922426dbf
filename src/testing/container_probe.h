// Whether this host can start a container, for the test suites that run real podman containers
// (container_podman_test, container_e2e_test, pytorch_image_e2e_test). Having podman and runc
// installed is not enough: in a chroot or a restricted sandbox, `runc create` fails (rootfs
// preparation, rlimits). Those suites skip with the reason where containers cannot start, as the
// Slurm suites do where Slurm is not running; CI, which must run them, sets
// TRAINYARD_REQUIRE_CONTAINERS=1 (.ci/run) and they fail instead.
#pragma once

#include <string>

namespace trainyard::testing {

// "" when `podman run` of a trivial image (busybox-static imported FROM scratch into a private,
// temporary storage, then removed) exits 0; otherwise why not: the missing program, or podman's
// own error. Probed once per process, on the first call; later calls return the same answer.
// Thread-safe.
std::string ContainerHostProblem();

// True when the environment says containers must run here (TRAINYARD_REQUIRE_CONTAINERS=1):
// a suite then fails with ContainerHostProblem() instead of skipping.
bool ContainersRequired();

// What a suite fails with where containers are required but `problem` (ContainerHostProblem())
// stops them. Worded so that no suite's SKIP_REGULAR_EXPRESSION ("... tests need ...") matches:
// ctest must report the suite Failed, not Skipped.
std::string ContainersRequiredFailure(const std::string& problem);

}  // namespace trainyard::testing
