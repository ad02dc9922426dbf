// CgroupLimits: memory and CPU limits for replicas through cgroup v2 (where the host allows it).
//
// Each replica attempt gets its own cgroup <parent>/<name> with
//   memory.max = the machine type's memory (the kernel OOM-kills the replica beyond it), and
//   cpu.max    = "<vCPUs x 100000> 100000" (CFS bandwidth: at most that many CPUs' worth),
// which trainyard-exec-wrapper moves the replica into before it starts (--cgroup).
//
// Requirements (checked once by Probe, which never fails but says why limits are off):
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
// Thread-safety: immutable after Probe; Create/Remove/OomKills touch only their own cgroup.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/status.h"

namespace trainyard::executor {

struct CgroupOptions {
  bool enabled = true;                             // false: never use cgroups
  std::filesystem::path mount = "/sys/fs/cgroup";  // where cgroup2 is mounted
  std::filesystem::path proc_self_cgroup = "/proc/self/cgroup";
  // The cgroup replica cgroups are created in: absolute, or relative to `mount`. Empty = the
  // server's own cgroup. Created if missing.
  std::filesystem::path parent;
  bool check_filesystem = true;  // statfs: `mount` must be cgroup2 (tests use a plain directory)
};

class CgroupLimits {
 public:
  // Limits off, with the reason.
  explicit CgroupLimits(std::string why_not = "cgroup limits are turned off");

  // Looks at the host once (see the requirements above).
  static CgroupLimits Probe(const CgroupOptions& options);

  bool enabled() const { return !parent_.empty(); }
  // Why limits are not enforced, naming the fix; empty when enabled.
  const std::string& why_not() const { return why_not_; }
  const std::filesystem::path& parent() const { return parent_; }

  // Creates <parent>/<name> (or reuses it) with memory.max = memory_gib (rounded down to whole
  // bytes) and cpu.max for `cpus` CPUs. UNAVAILABLE naming the file on failure.
  StatusOr<std::filesystem::path> Create(const std::string& name, double memory_gib,
                                         double cpus) const;

  // Removes an attempt's cgroup. True once it is gone. While processes are still in it —
  // children that left the replica's process group, which the wrapper's group kill misses —
  // they are killed (cgroup.kill) and false is returned: call again later.
  static bool Remove(const std::filesystem::path& dir);

  // How often the kernel OOM-killed something in the cgroup (memory.events oom_kill); 0 if
  // unknown.
  static int64_t OomKills(const std::filesystem::path& dir);

 private:
  std::filesystem::path parent_;
  std::string why_not_;
};

}  // namespace trainyard::executor
