// CgroupLimits against a directory tree standing in for /sys/fs/cgroup (no real cgroups are
// touched): what Probe concludes from /proc/self/cgroup and the controller files, and what a
// replica's cgroup gets written; on cgroup v1 the hierarchies found from a fake mountinfo.
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
  auto dirs = limits.Create("trainyard-7-workerpool0-0-1", 15, 4);
  ASSERT_TRUE(dirs.ok()) << dirs.status();
  ASSERT_EQ(dirs->size(), 1u);
  const fs::path* cg = &dirs->front();
  std::string got = ReadFileOrDie(parent / "cgroup.subtree_control") + " | " +
                    cg->filename().string() + " memory.max=" + ReadFileOrDie(*cg / "memory.max") +
                    " cpu.max=" + ReadFileOrDie(*cg / "cpu.max");
  WriteFileOrDie(*cg / "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  got += " oom_kills=" + std::to_string(CgroupLimits::ReadMemory(*cg).oom_kills);
  CgroupLimits::Remove(*dirs);
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

// cgroup v1: the hierarchies come from mountinfo (here: memory alone, cpu co-mounted with
// cpuacct, as systemd does) and /proc/self/cgroup, inside a container whose memory hierarchy is
// mounted at its own cgroup (root /docker/c1).
class CgroupV1Test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    options_.mount = dir_ / "cgroup";  // a plain directory: not cgroup2, so v1 is looked for
    options_.proc_self_cgroup = dir_ / "proc_self_cgroup";
    options_.proc_self_mountinfo = dir_ / "mountinfo";
    WriteFileOrDie(options_.proc_self_cgroup,
                   "9:name=systemd:/system.slice/trainyard.service\n4:memory:/docker/c1/srv\n"
                   "2:cpu,cpuacct:/srv\n0::/\n");
    WriteFileOrDie(options_.proc_self_mountinfo,
                   "31 23 0:28 / " + (dir_ / "cgroup").string() +
                       " rw - tmpfs tmpfs rw\n35 31 0:32 /docker/c1 " + Mount("memory") +
                       " rw,relatime shared:9 - cgroup cgroup rw,memory\n32 31 0:29 / " +
                       Mount("cpu,cpuacct") +
                       " rw - cgroup cgroup rw,cpu,cpuacct\n"
                       "41 31 0:38 / " +
                       Mount("unified") + " rw - cgroup2 cgroup2 rw\n");
    fs::create_directories(dir_ / "cgroup" / "memory" / "srv");
    fs::create_directories(dir_ / "cgroup" / "cpu,cpuacct" / "srv");
  }
  std::string Mount(const std::string& name) { return (dir_ / "cgroup" / name).string(); }

  fs::path dir_;
  CgroupOptions options_;
};

TEST_F(CgroupV1Test, FindsTheServersCgroupInTheMemoryAndCpuHierarchies) {
  CgroupLimits limits = CgroupLimits::Probe(options_);
  ASSERT_TRUE(limits.enabled()) << limits.why_not();
  EXPECT_EQ(limits.LimitFiles() + " | " + limits.parents().at(0).string() + " | " +
                limits.parents().at(1).string(),
            "memory.limit_in_bytes, cpu.cfs_quota_us | " + Mount("memory") + "/srv | " +
                Mount("cpu,cpuacct") + "/srv");
}

TEST_F(CgroupV1Test, AtTheRootOfAContainersHierarchyTheParentIsTheMountPoint) {
  WriteFileOrDie(options_.proc_self_cgroup, "4:memory:/docker/c1\n2:cpu,cpuacct:/\n");
  CgroupLimits limits = CgroupLimits::Probe(options_);
  ASSERT_TRUE(limits.enabled()) << limits.why_not();
  EXPECT_EQ(limits.parents().at(0).string() + " " + limits.parents().at(1).string(),
            Mount("memory") + " " + Mount("cpu,cpuacct"));
}

TEST_F(CgroupV1Test, AV2StyleParentDirectoryIsRefusedNamingTheFix) {
  options_.parent = options_.mount / "trainyard";
  EXPECT_NE(CgroupLimits::Probe(options_).why_not().find("give a cgroup path such as /trainyard"),
            std::string::npos);
}

TEST_F(CgroupV1Test, EachReplicaGetsMemoryAndCpuLimitsAndSwapCannotHideAnOom) {
  options_.parent = "/trainyard";  // the same cgroup path in both hierarchies, created
  CgroupLimits limits = CgroupLimits::Probe(options_);
  ASSERT_TRUE(limits.enabled()) << limits.why_not();
  // The kernel creates these files with the directory; with swap accounting, memsw too.
  fs::path mem = Mount("memory") + "/trainyard/trainyard-7-workerpool0-0-1";
  fs::create_directories(mem);
  WriteFileOrDie(mem / "memory.memsw.limit_in_bytes", "9223372036854771712\n");
  auto dirs = limits.Create("trainyard-7-workerpool0-0-1", 1.8, 2);
  ASSERT_TRUE(dirs.ok()) << dirs.status();
  const fs::path& cpu = dirs->at(1);
  std::string got = dirs->at(0).string() + " " + ReadFileOrDie(mem / "memory.limit_in_bytes") +
                    " " + ReadFileOrDie(mem / "memory.memsw.limit_in_bytes") + " | " +
                    cpu.string() + " " + ReadFileOrDie(cpu / "cpu.cfs_quota_us") + "/" +
                    ReadFileOrDie(cpu / "cpu.cfs_period_us");
  const bool removed = CgroupLimits::Remove(*dirs) && !fs::exists(mem) && !fs::exists(cpu);
  EXPECT_EQ(got + " removed=" + std::to_string(removed),
            mem.string() + " 1932735283 1932735283 | " + Mount("cpu,cpuacct") +
                "/trainyard/trainyard-7-workerpool0-0-1 200000/100000 removed=1");
}

TEST_F(CgroupV1Test, ACpuQuotaAboveTheParentsIsCappedToIt) {
  // The server's cpu cgroup may itself be limited (a container with --cpus 1.5).
  WriteFileOrDie(Mount("cpu,cpuacct") + "/srv/cpu.cfs_quota_us", "75000\n");
  WriteFileOrDie(Mount("cpu,cpuacct") + "/srv/cpu.cfs_period_us", "50000\n");
  CgroupLimits limits = CgroupLimits::Probe(options_);
  auto dirs = limits.Create("trainyard-8-workerpool0-0-1", 1, 4);
  ASSERT_TRUE(dirs.ok()) << dirs.status();
  EXPECT_EQ(ReadFileOrDie(dirs->at(1) / "cpu.cfs_quota_us"), "150000");
}

TEST_F(CgroupV1Test, AnOomKillIsReadBackWithItsLimitAndPeak) {
  fs::path mem = dir_ / "replica";
  fs::create_directories(mem);
  WriteFileOrDie(mem / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  WriteFileOrDie(mem / "memory.failcnt", "142\n");
  WriteFileOrDie(mem / "memory.max_usage_in_bytes", "1932734464\n");
  WriteFileOrDie(mem / "memory.limit_in_bytes", "1932734464\n");
  CgroupMemoryReport m = CgroupLimits::ReadMemory(mem);
  EXPECT_EQ(std::to_string(m.OomKilled(137)) + std::to_string(m.OomKilled(1)) + " " +
                OomMessage("workerpool0 replica 0", m, "n1-highcpu-2"),
            "10 workerpool0 replica 0 was killed by the out-of-memory killer: it used 1.8 GiB of "
            "its 1.8 GiB limit (n1-highcpu-2); pick a machine type with more memory");
}

TEST_F(CgroupV1Test, OnOldKernelsHittingTheLimitAndSigkillCountAsOom) {
  CgroupMemoryReport m;
  m.failcnt = 3;  // memory.oom_control without oom_kill (before Linux 4.13)
  CgroupMemoryReport never_hit;
  never_hit.failcnt = 0;
  EXPECT_EQ(std::to_string(m.OomKilled(137)) + std::to_string(never_hit.OomKilled(137)), "10");
}

TEST_F(CgroupV1Test, WithoutAMemoryHierarchyLimitsAreOffAndSaySo) {
  WriteFileOrDie(options_.proc_self_mountinfo,
                 "32 31 0:29 / " + Mount("cpu") + " rw - cgroup cgroup rw,cpu\n");
  CgroupLimits limits = CgroupLimits::Probe(options_);
  EXPECT_EQ(limits.why_not(), options_.mount.string() + " is not a cgroup v2 mount and " +
                                  options_.proc_self_mountinfo.string() +
                                  " shows no cgroup v1 memory controller; mount one (or boot "
                                  "with systemd.unified_cgroup_hierarchy=1) to get memory/CPU "
                                  "limits");
}

// Delegated mode on v2: the server moves into <own>/server and any other process found in its
// cgroup into <own>/supervisors before the controllers are enabled for the leaves; a re-adopted
// replica's limits are written again; a clean stop disables the controllers.
TEST_F(CgroupLimitsTest, DelegatedServerEntersItsLeafAndSupervisorsGetTheirs) {
  const fs::path own = options_.mount / "server.slice" / "trainyard.service";
  WriteFileOrDie(own / "cgroup.procs", "4242\n");  // e.g. a supervisor of an older server
  options_.delegated = true;
  CgroupLimits limits = CgroupLimits::Probe(options_);
  ASSERT_TRUE(limits.enabled()) << limits.why_not();
  EXPECT_EQ(limits.parent(), own);
  ASSERT_EQ(limits.supervisor_cgroups().size(), 1u);
  EXPECT_EQ(limits.supervisor_cgroups().front(), own / "supervisors");
  EXPECT_EQ(ReadFileOrDie(own / "server" / "cgroup.procs"), "0");
  EXPECT_EQ(ReadFileOrDie(own / "supervisors" / "cgroup.procs"), "4242");
  EXPECT_EQ(ReadFileOrDie(own / "cgroup.subtree_control"), "+memory +cpu");

  std::vector<fs::path> dirs;
  ASSERT_TRUE(limits.Reapply("trainyard-j-workerpool0-0-1", 2, 1.5, &dirs).ok());
  EXPECT_TRUE(dirs.empty()) << "no such attempt cgroup: nothing to restore";
  fs::create_directories(own / "trainyard-j-workerpool0-0-1");
  ASSERT_TRUE(limits.Reapply("trainyard-j-workerpool0-0-1", 2, 1.5, &dirs).ok());
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_EQ(ReadFileOrDie(dirs[0] / "memory.max") + " " + ReadFileOrDie(dirs[0] / "cpu.max"),
            "2147483648 150000 100000");

  ASSERT_TRUE(limits.ReleaseControllers().ok());
  EXPECT_EQ(ReadFileOrDie(own / "cgroup.subtree_control"), "-memory -cpu");
}

// A server that systemd already started in the leaf (DelegateSubgroup=server) divides the
// cgroup above it; without delegation nothing moves and there are no supervisor cgroups.
TEST_F(CgroupLimitsTest, DelegatedServerAlreadyInItsLeafUsesTheCgroupAbove) {
  const fs::path own = options_.mount / "server.slice" / "trainyard.service";
  WriteFileOrDie(options_.proc_self_cgroup, "0::/server.slice/trainyard.service/server\n");
  fs::create_directories(own / "server");
  options_.delegated = true;
  CgroupLimits limits = CgroupLimits::Probe(options_);
  ASSERT_TRUE(limits.enabled()) << limits.why_not();
  EXPECT_EQ(limits.parent(), own);

  options_.delegated = false;
  WriteFileOrDie(options_.proc_self_cgroup, "0::/server.slice/trainyard.service\n");
  CgroupLimits plain = CgroupLimits::Probe(options_);
  EXPECT_TRUE(plain.supervisor_cgroups().empty());
  EXPECT_TRUE(plain.ReleaseControllers().ok());
  EXPECT_EQ(ReadFileOrDie(own / "cgroup.subtree_control"), "+memory +cpu") << "left alone";
}

}  // namespace
}  // namespace trainyard::executor
