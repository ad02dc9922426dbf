// CgroupLimits: memory and CPU limits for replicas through cgroup v2 or v1 (where the host
// allows it).
//
// cgroup v2 (unified hierarchy at `mount`): each replica attempt gets its own cgroup
// <parent>/<name> with
//   memory.max = the machine type's memory (the kernel OOM-kills the replica beyond it), and
//   cpu.max    = "<vCPUs x 100000> 100000" (CFS bandwidth: at most that many CPUs' worth),
// which trainyard-exec-wrapper moves the replica into before it starts (--cgroup).
//
// cgroup v1 or hybrid (`mount` is not cgroup2; the memory and cpu controllers are cgroup v1
// hierarchies found in /proc/self/mountinfo, wherever they are mounted): the attempt gets
// <parent>/<name> in the memory hierarchy with memory.limit_in_bytes (and
// memory.memsw.limit_in_bytes where swap accounting exists, so swap cannot hide an OOM) = the
// machine type's memory, and the same name in the cpu hierarchy with cpu.cfs_period_us = 100000
// and cpu.cfs_quota_us = vCPUs x 100000; the wrapper joins both (--cgroup twice). <parent> is,
// in each hierarchy, the server's own cgroup there (/proc/self/cgroup; v1 allows children of a
// cgroup with processes), or --cgroup-parent taken as a cgroup path below each hierarchy's root
// ("trainyard" and "/trainyard" both mean <memory mount>/trainyard and <cpu mount>/trainyard).
// Only memory and cpu are moved: the replica stays in the server's cgroup of every other
// hierarchy (name=systemd included, so systemd still counts it as part of the service).
//
// cgroup v2 requirements (checked once by Probe, which never fails but says why limits are off):
//   - a cgroup v2 (unified) hierarchy mounted at `mount` (/sys/fs/cgroup), not v1/hybrid;
//   - a parent cgroup we may create directories in, whose cgroup.subtree_control has (or
//     accepts) the memory and cpu controllers. By default that is the server's own cgroup, which
//     works only when it is the root cgroup: cgroup v2 allows controllers for children only in a
//     cgroup without processes of its own. Otherwise give the server an empty, delegated cgroup
//     with --cgroup-parent (LocalExecutorOptions::cgroup.parent), e.g. as root:
//       mkdir /sys/fs/cgroup/trainyard && echo "+memory +cpu" >
//       /sys/fs/cgroup/cgroup.subtree_control
//     or a systemd unit with Delegate=yes and the server in a leaf below it.
//
// v1 requirements: write access to the parent in both hierarchies (root, or a delegated subtree).
//
// Delegated mode (CgroupOptions::delegated, `--cgroup-delegated`; the systemd unit's
// Delegate=yes): the parent — --cgroup-parent, else the server's own cgroup, or its parent when
// the server already sits in a leaf named "server" (systemd's DelegateSubgroup=server) — belongs
// to the server alone. Probe moves the server into <parent>/server (every process of it: a
// cgroup.procs write moves all threads), any other process found in <parent> into
// <parent>/supervisors, and hands out <parent>/supervisors as the cgroup every replica's
// supervisor joins (supervisor_cgroups(); trainyard-exec-wrapper --supervisor-cgroup). So the
// server's cgroup holds the server alone: killing every process in it (an OOM kill, systemd's
// KillMode=control-group applied to that leaf, `kill` of its cgroup.procs) leaves supervisors and
// replicas running, and the next server re-adopts them. On v2 this also empties <parent> of
// processes, which lets the memory and cpu controllers be enabled for the replica leaves beside
// it. On v1 the leaves are made in the memory and cpu hierarchies. If entering the leaves fails,
// limits are off and why_not() says why.
//
// v2 restarts: systemd (before DelegateSubgroup=, v254) puts a restarted server into <parent>
// itself, which cgroup v2 refuses (EBUSY) while <parent> has controllers enabled for children.
// ReleaseControllers (at a clean stop) disables them — replicas run on without limits until the
// next server enables them again and Reapply()s each re-adopted replica's limits.
//
// Thread-safety: immutable after Probe; Create/Remove/ReadMemory touch only their own cgroups.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::executor {

struct CgroupOptions {
  bool enabled = true;                             // false: never use cgroups
  std::filesystem::path mount = "/sys/fs/cgroup";  // where cgroup2 is mounted
  std::filesystem::path proc_self_cgroup = "/proc/self/cgroup";
  // The cgroup replica cgroups are created in: absolute, or relative to `mount`. Empty = the
  // server's own cgroup. Created if missing.
  std::filesystem::path parent;
  // Where the cgroup v1 hierarchies are found when `mount` is not cgroup2.
  std::filesystem::path proc_self_mountinfo = "/proc/self/mountinfo";
  // statfs tells v2 (`mount` is cgroup2) from v1/hybrid (then the hierarchies come from
  // proc_self_mountinfo). false: take `mount` as cgroup v2 without looking (tests of the v2 path
  // on a plain directory).
  bool check_filesystem = true;
  // The parent is the server's alone: see "Delegated mode" above.
  bool delegated = false;
};

enum class CgroupVersion { kNone, kV1, kV2 };

// What an attempt's memory cgroup recorded (read after the replica ended). -1 = not known.
struct CgroupMemoryReport {
  int64_t oom_kills = -1;    // v2 memory.events / v1 memory.oom_control oom_kill (v1: kernel 4.13+)
  int64_t failcnt = -1;      // v1 memory.failcnt: how often usage hit the limit
  int64_t peak_bytes = -1;   // v2 memory.peak (kernel 5.19+) / v1 memory.max_usage_in_bytes
  int64_t limit_bytes = -1;  // v2 memory.max / v1 memory.limit_in_bytes

  // Whether a replica that ended with `exit_code` was killed by the OOM killer: SIGKILL (137,
  // the wrapper's 128 + signal) and an oom_kill counted — or, on kernels that do not count them,
  // the limit was hit. A kill -9 without OOM is not one.
  bool OomKilled(int exit_code) const;
};

// "1.8 GiB", "600.0 MiB": a byte count for messages; "unknown" for -1.
std::string FormatBytes(int64_t bytes);

// The failure message of an OOM-killed replica (`replica` as in "workerpool0 replica 0"):
// "workerpool0 replica 0 was killed by the out-of-memory killer: it used 1.8 GiB of its 1.8 GiB
// limit (n1-highcpu-2); pick a machine type with more memory" — "it reached its 1.8 GiB limit"
// when the peak is not known, and without numbers when the limit is not either.
std::string OomMessage(const std::string& replica, const CgroupMemoryReport& memory,
                       const std::string& machine_type);

class CgroupLimits {
 public:
  // Limits off, with the reason.
  explicit CgroupLimits(std::string why_not = "cgroup limits are turned off");

  // Looks at the host once (see the requirements above).
  static CgroupLimits Probe(const CgroupOptions& options);

  bool enabled() const { return !parents_.empty(); }
  CgroupVersion version() const { return version_; }
  // Why limits are not enforced, naming the fix; empty when enabled.
  const std::string& why_not() const { return why_not_; }
  // Where replica cgroups are made: one parent on v2; on v1 the memory hierarchy's first, then
  // the cpu hierarchy's (one when both controllers share a hierarchy). Empty when disabled.
  const std::vector<std::filesystem::path>& parents() const { return parents_; }
  const std::filesystem::path& parent() const { return parents_.front(); }
  // The files that hold the limits, for notes: "memory.max, cpu.max" (v2) or
  // "memory.limit_in_bytes, cpu.cfs_quota_us" (v1).
  std::string LimitFiles() const;
  // Delegated mode: the cgroups each replica's supervisor joins (one on v2, memory and cpu on
  // v1); empty otherwise, or when the server could not enter its leaf.
  const std::vector<std::filesystem::path>& supervisor_cgroups() const { return supervisors_; }

  // Creates <parent>/<name> in each of parents() (or reuses it) with the memory limit =
  // memory_gib (rounded down to whole bytes) and the CPU limit for `cpus` CPUs, as above.
  // Returns the directories, the memory one first. IO_ERROR naming the file on failure;
  // FAILED_PRECONDITION when disabled.
  StatusOr<std::vector<std::filesystem::path>> Create(const std::string& name, double memory_gib,
                                                      double cpus) const;

  // A re-adopted replica's cgroups: the directories of `name` that exist (empty when none does),
  // with their limits written again (after ReleaseControllers they had none). A limit that cannot
  // be written is an error; the directories are still in *dirs for OOM reports and removal.
  Status Reapply(const std::string& name, double memory_gib, double cpus,
                 std::vector<std::filesystem::path>* dirs) const;

  // Delegated v2 only (a no-op otherwise): disables the memory and cpu controllers for the
  // parent's children, so that systemd can start the next server in the parent (see above).
  Status ReleaseControllers() const;

  // Removes an attempt's cgroups. True once all are gone. While processes are still in one —
  // children that left the replica's process group, which the wrapper's group kill misses —
  // they are killed (v2 cgroup.kill; v1 SIGKILL to each pid of cgroup.procs) and false is
  // returned: call again later.
  static bool Remove(const std::vector<std::filesystem::path>& dirs);

  // What the memory cgroup `dir` (Create's first directory, v1 or v2) recorded.
  static CgroupMemoryReport ReadMemory(const std::filesystem::path& dir);

 private:
  static CgroupLimits ProbeV1(const CgroupOptions& options);
  static CgroupLimits ProbeV2(const CgroupOptions& options);
  static CgroupLimits ProbeDelegated(const CgroupOptions& options, bool v2);
  Status WriteLimits(const std::vector<std::filesystem::path>& dirs, double memory_gib,
                     double cpus) const;
  StatusOr<std::vector<std::filesystem::path>> MakeDirs(const std::string& name) const;

  CgroupVersion version_ = CgroupVersion::kNone;
  std::vector<std::filesystem::path> parents_;
  std::vector<std::filesystem::path> supervisors_;
  bool delegated_ = false;
  std::string why_not_;
};

}  // namespace trainyard::executor
