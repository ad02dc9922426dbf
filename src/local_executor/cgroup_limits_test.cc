// CgroupLimits against a directory tree standing in for /sys/fs/cgroup (no real cgroups are
// touched): what Probe concludes from /proc/self/cgroup and the controller files, and what a
// replica's cgroup gets written.
#include "local_executor/cgroup_limits.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

namespace fs = std::filesystem;
using testing::ReadFileOrDie;
using testing::WriteFileOrDie;

class CgroupLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    options_.mount = dir_ / "cgroup";
    options_.proc_self_cgroup = dir_ / "proc_self_cgroup";
    options_.check_filesystem = false;
    WriteFileOrDie(options_.proc_self_cgroup, "0::/server.slice/trainyard.service\n");
    fs::path own = options_.mount / "server.slice" / "trainyard.service";
    fs::create_directories(own);
    WriteFileOrDie(own / "cgroup.controllers", "cpu io memory pids\n");
    WriteFileOrDie(own / "cgroup.subtree_control", "");
  }

  fs::path dir_;
  CgroupOptions options_;
};

TEST_F(CgroupLimitsTest, CgroupV1HostsAreReportedWithTheReason) {
  WriteFileOrDie(options_.proc_self_cgroup, "4:memory:/user.slice\n1:cpu:/\n");
  CgroupLimits limits = CgroupLimits::Probe(options_);
  EXPECT_EQ(std::to_string(limits.enabled()) + " " + limits.why_not(),
            "0 this host has no cgroup v2 hierarchy (" + options_.proc_self_cgroup.string() +
                " has no '0::' entry: cgroup v1); boot with systemd.unified_cgroup_hierarchy=1 "
                "to get memory/CPU limits");
}

TEST_F(CgroupLimitsTest, WithoutDelegatedControllersLimitsAreOffAndTheFixIsNamed) {
  WriteFileOrDie(options_.mount / "server.slice" / "trainyard.service" / "cgroup.controllers",
                 "pids\n");
  CgroupLimits limits = CgroupLimits::Probe(options_);
  EXPECT_FALSE(limits.enabled());
  EXPECT_NE(limits.why_not().find("the memory and cpu controllers are not both available in"),
            std::string::npos)
      << limits.why_not();
  EXPECT_NE(limits.why_not().find("--cgroup-parent"), std::string::npos) << limits.why_not();
}

TEST_F(CgroupLimitsTest, ExplicitParentGetsControllersAndEachReplicaItsOwnLimits) {
  fs::path parent = options_.mount / "trainyard";
  fs::create_directories(parent);
  WriteFileOrDie(parent / "cgroup.controllers", "cpuset cpu io memory pids\n");
  WriteFileOrDie(parent / "cgroup.subtree_control", "");
  options_.parent = "trainyard";  // relative to the mount
  CgroupLimits limits = CgroupLimits::Probe(options_);
  ASSERT_TRUE(limits.enabled()) << limits.why_not();
  auto cg = limits.Create("trainyard-7-workerpool0-0-1", 15, 4);
  ASSERT_TRUE(cg.ok()) << cg.status();
  std::string got = ReadFileOrDie(parent / "cgroup.subtree_control") + " | " +
                    cg->filename().string() + " memory.max=" + ReadFileOrDie(*cg / "memory.max") +
                    " cpu.max=" + ReadFileOrDie(*cg / "cpu.max");
  WriteFileOrDie(*cg / "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  got += " oom_kills=" + std::to_string(CgroupLimits::OomKills(*cg));
  CgroupLimits::Remove(*cg);
  EXPECT_EQ(got + " removed=" + std::to_string(!fs::exists(*cg)),
            "+memory +cpu | trainyard-7-workerpool0-0-1 memory.max=16106127360 cpu.max=400000 "
            "100000 oom_kills=1 removed=1");
}

TEST_F(CgroupLimitsTest, TurnedOffMeansOff) {
  options_.enabled = false;
  CgroupLimits limits = CgroupLimits::Probe(options_);
  EXPECT_EQ(limits.why_not() + " " + limits.Create("x", 1, 1).status().ToString(),
            "cgroup limits are turned off by configuration FAILED_PRECONDITION: cgroup limits are "
            "off: cgroup limits are turned off by configuration");
}

}  // namespace
}  // namespace trainyard::executor
