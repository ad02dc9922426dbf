#include "container/podman_runtime.h"

#include <gtest/gtest.h>

#include "container/fake_command_runner.h"

namespace trainyard::container {
namespace {

constexpr char kInfoCrunV1[] =
    R"({"host":{"cgroupVersion":"v1","ociRuntime":{"name":"crun"},"security":{"rootless":false}}})";
constexpr char kInfoRuncV1[] =
    R"({"host":{"cgroupVersion":"v1","ociRuntime":{"name":"runc"},"security":{"rootless":false}}})";

const HostLimits kSandbox{20000, 96364, false};

std::string Joined(const std::vector<std::string>& v) { return FakeCommandRunner::Join(v); }

TEST(FittingUlimitsTest, FollowTheHardLimitsUnlessTheProcessMayRaiseThem) {
  EXPECT_EQ(Joined(FittingUlimits(kSandbox)) + " | " +
                Joined(FittingUlimits(HostLimits{1 << 30, 1 << 30, false})) + " | " +
                Joined(FittingUlimits(HostLimits{20000, 96364, true})),
            "nofile=20000:20000 nproc=32768:32768 | nofile=1048576:1048576 nproc=32768:32768 | ");
}

TEST(DetectPodmanRuntimeTest, FallsBackToRuncWhenTheDefaultRuntimeFails) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "info") return CommandResult{0, kInfoCrunV1, ""};
    if (Joined(argv).find("--runtime runc") == std::string::npos) {
      return CommandResult{126, "",
                           "Error: OCI runtime error: crun: cgroups in hybrid mode not supported, "
                           "drop all controllers from cgroupv2"};
    }
    return CommandResult{0, "", ""};
  });
  auto rt = DetectPodmanRuntime(runner, PodmanOptions{}, kSandbox, "/tmp/probe");
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(rt->summary + "\n" + runner.Calls(),
            "podman runtime runc, cgroups v1, rootful, --ulimit nofile=20000:20000, --ulimit "
            "nproc=32768:32768\n"
            "podman info --format json\n"
            "podman run --rm --network none --ulimit nofile=20000:20000 --ulimit "
            "nproc=32768:32768 --rootfs /tmp/probe /true\n"
            "podman run --rm --network none --runtime runc --ulimit nofile=20000:20000 --ulimit "
            "nproc=32768:32768 --rootfs /tmp/probe /true\n");
}

TEST(DetectPodmanRuntimeTest, KeepsTheDefaultRuntimeWhenItWorks) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    return CommandResult{0, argv[1] == "info" ? kInfoRuncV1 : "", ""};
  });
  auto rt = DetectPodmanRuntime(runner, PodmanOptions{}, HostLimits{1024, 1024, true}, "/p");
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ("[" + rt->runtime + "] [" + Joined(rt->ulimits) + "] " + rt->summary,
            "[] [] podman runtime runc, cgroups v1, rootful");
}

TEST(DetectPodmanRuntimeTest, NothingWorksSaysWhatToConfigure) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "info") return CommandResult{0, kInfoCrunV1, ""};
    if (Joined(argv).find("--runtime runc") != std::string::npos) {
      return CommandResult{125, "",
                           "Error: default OCI runtime \"runc\" not found: invalid argument"};
    }
    return DeadlineExceededError("podman run did not finish within 60000 ms and was killed");
  });
  auto rt = DetectPodmanRuntime(runner, PodmanOptions{}, kSandbox, "/p");
  EXPECT_EQ(rt.status().ToString(),
            "FAILED_PRECONDITION: podman cannot start containers on this host (cgroups v1, "
            "rootful); tried:\n"
            "  crun (podman's default): podman run did not finish within 60000 ms and was killed\n"
            "  runc: exit 125: Error: default OCI runtime \"runc\" not found: invalid argument\n"
            "Configure: install runc (`apt-get install runc`; crun does not support hybrid cgroup "
            "v1/v2 hosts) and keep container rlimits at or below this process's hard limits "
            "(nofile 20000, nproc 32768): in /etc/containers/containers.conf set [engine] runtime "
            "= \"runc\" and [containers] default_ulimits = [\"nofile=20000:20000\", "
            "\"nproc=32768:32768\"], or give the server CAP_SYS_RESOURCE");
}

TEST(DetectPodmanRuntimeTest, MissingPodmanIsAFailedPreconditionWithTheFix) {
  FakeCommandRunner runner([](const std::vector<std::string>&) -> StatusOr<CommandResult> {
    return UnavailableError("cannot run podman: No such file or directory");
  });
  EXPECT_EQ(DetectPodmanRuntime(runner, PodmanOptions{}, kSandbox, "/p").status().ToString(),
            "FAILED_PRECONDITION: podman is not usable: cannot run podman: No such file or "
            "directory; install it with `apt-get install podman runc` (scripts/install-deps.sh "
            "--test), or run jobs with imageUri: local (host commands) on this server");
}

}  // namespace
}  // namespace trainyard::container
