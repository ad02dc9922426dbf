#include "container/podman_probe_cache.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::container {
namespace {

TEST(PodmanProbeCacheTest, KeepsAProbeUnderItsKeyOnly) {
  const auto dir = testing::MakeTestDir();
  const auto file = dir / "cache" / "podman-runtime.json";
  PodmanRuntime r{"runc", {"nofile=1024:1024"}, false, "podman runtime runc, cgroups v1"};
  EXPECT_FALSE(LoadPodmanProbe(file, "k1").has_value());
  SavePodmanProbe(file, "k1", r);
  auto got = LoadPodmanProbe(file, "k1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->runtime, "runc");
  EXPECT_EQ(got->ulimits, r.ulimits);
  EXPECT_EQ(got->summary, r.summary);
  EXPECT_FALSE(LoadPodmanProbe(file, "k2").has_value());
  testing::WriteFileOrDie(file, "{not json");
  EXPECT_FALSE(LoadPodmanProbe(file, "k1").has_value());
  testing::WriteFileOrDie(file, R"({"key": "k1", "runtime": 3})");
  EXPECT_FALSE(LoadPodmanProbe(file, "k1").has_value());
  EXPECT_FALSE(LoadPodmanProbe("", "k1").has_value());
}

TEST(PodmanProbeCacheTest, TheKeyChangesWithThePodmanBinaryAndTheLimits) {
  const auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "podman", "#!/bin/sh\n");
  PodmanOptions o;
  o.podman = (dir / "podman").string();
  HostLimits limits{1024, 4096};
  const std::string before = PodmanProbeKey(o, limits);
  EXPECT_EQ(PodmanProbeKey(o, limits), before);
  EXPECT_NE(PodmanProbeKey(o, HostLimits{2048, 4096}), before);
  testing::WriteFileOrDie(dir / "podman", "#!/bin/sh\n# upgraded\n");
  EXPECT_NE(PodmanProbeKey(o, limits), before);
  // Where the images are stored does not change what runs them.
  const std::string upgraded = PodmanProbeKey(o, limits);
  o.global_args = {"--root", "/elsewhere"};
  EXPECT_EQ(PodmanProbeKey(o, limits), upgraded);
}

}  // namespace
}  // namespace trainyard::container
