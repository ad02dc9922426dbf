#include "local_executor/cgroup_limits.h"

#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "common/file_util.h"

namespace trainyard::executor {
namespace fs = std::filesystem;

namespace {

constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC
constexpr int64_t kCpuPeriodUs = 100000;

// Controller names in a cgroup.controllers / cgroup.subtree_control file ("cpu memory pids").
std::set<std::string> Controllers(const fs::path& file) {
  std::set<std::string> out;
  auto text = ReadFile(file);
  if (!text.ok()) return out;
  std::istringstream in(*text);
  std::string word;
  while (in >> word) out.insert(word[0] == '+' ? word.substr(1) : word);
  return out;
}

// cgroup files are written in place with one write(2): they cannot be replaced by a rename.
Status WriteCgroupFile(const fs::path& file, const std::string& value) {
  std::ofstream out(file, std::ios::out | std::ios::trunc);
  out << value;
  out.flush();
  if (!out) return IoError("cannot write '" + value + "' to " + file.string());
  return Status::Ok();
}

std::string Errno() { return std::strerror(errno); }

}  // namespace

CgroupLimits::CgroupLimits(std::string why_not) : why_not_(std::move(why_not)) {}

CgroupLimits CgroupLimits::Probe(const CgroupOptions& o) {
  if (!o.enabled) return CgroupLimits("cgroup limits are turned off by configuration");
  std::string own;
  {
    std::ifstream in(o.proc_self_cgroup);
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("0::")) own = line.substr(3);
    }
  }
  if (own.empty()) {
    return CgroupLimits("this host has no cgroup v2 hierarchy (" + o.proc_self_cgroup.string() +
                        " has no '0::' entry: cgroup v1); boot with systemd.unified_cgroup_"
                        "hierarchy=1 to get memory/CPU limits");
  }
  if (o.check_filesystem) {
    struct statfs st {};
    if (::statfs(o.mount.c_str(), &st) != 0 || st.f_type != kCgroup2Magic) {
      return CgroupLimits(o.mount.string() +
                          " is not a cgroup v2 mount (a cgroup v1 or hybrid host); memory/CPU "
                          "limits need the unified hierarchy there");
    }
  }
  const bool explicit_parent = !o.parent.empty();
  fs::path parent = explicit_parent ? (o.parent.is_absolute() ? o.parent : o.mount / o.parent)
                                    : o.mount / fs::path(own).relative_path();
  const std::string fix = explicit_parent
                              ? ""
                              : "; give the server an empty cgroup delegated to it with "
                                "--cgroup-parent (src/executor/README.md)";
  if (explicit_parent && !fs::exists(parent) && ::mkdir(parent.c_str(), 0755) != 0) {
    return CgroupLimits("cannot create cgroup " + parent.string() + ": " + Errno());
  }
  std::set<std::string> available = Controllers(parent / "cgroup.controllers");
  if (!available.count("memory") || !available.count("cpu")) {
    return CgroupLimits(
        "the memory and cpu controllers are not both available in " + parent.string() +
        " (cgroup.controllers: " + ReadFile(parent / "cgroup.controllers").value_or("unreadable") +
        "); enable them in its parent's cgroup.subtree_control" + fix);
  }
  std::set<std::string> enabled = Controllers(parent / "cgroup.subtree_control");
  if (!enabled.count("memory") || !enabled.count("cpu")) {
    Status s = WriteCgroupFile(parent / "cgroup.subtree_control", "+memory +cpu");
    enabled = Controllers(parent / "cgroup.subtree_control");
    if (!s.ok() || !enabled.count("memory") || !enabled.count("cpu")) {
      return CgroupLimits(
          "cannot enable the memory and cpu controllers for cgroups below " + parent.string() +
          (s.ok() ? std::string() : " (" + Errno() + ")") +
          ": cgroup v2 allows that only in a cgroup without processes of its own" +
          (explicit_parent ? " (move them to a child cgroup)" : ", and the server runs in it") +
          fix);
    }
  }
  // Can we create (and remove) a replica's cgroup here?
  fs::path probe = parent / ("trainyard-probe-" + std::to_string(::getpid()));
  if (::mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) {
    return CgroupLimits("cannot create cgroups in " + parent.string() + ": " + Errno() + fix);
  }
  std::error_code ec;
  fs::remove(probe, ec);
  CgroupLimits limits("");
  limits.parent_ = parent;
  return limits;
}

StatusOr<fs::path> CgroupLimits::Create(const std::string& name, double memory_gib,
                                        double cpus) const {
  if (!enabled()) return FailedPreconditionError("cgroup limits are off: " + why_not_);
  fs::path dir = parent_ / name;
  // Names are unique per attempt, so an existing one is this attempt's, left by a server that
  // died while starting it: reuse it.
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return IoError("cannot create cgroup " + dir.string() + ": " + Errno());
  }
  auto bytes = static_cast<int64_t>(std::floor(memory_gib * 1024 * 1024 * 1024));
  TY_RETURN_IF_ERROR(WriteCgroupFile(dir / "memory.max", std::to_string(bytes)));
  auto quota = static_cast<int64_t>(std::ceil(cpus * kCpuPeriodUs));
  TY_RETURN_IF_ERROR(WriteCgroupFile(
      dir / "cpu.max",
      std::to_string(std::max<int64_t>(quota, 1000)) + " " + std::to_string(kCpuPeriodUs)));
  return dir;
}

bool CgroupLimits::Remove(const fs::path& dir) {
  if (dir.empty()) return true;
  // A real cgroup directory is removed with rmdir(2) although it lists files.
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
  if (errno == EBUSY) {
    // Nothing of a replica may outlive it (as when a Vertex VM goes away).
    (void)WriteCgroupFile(dir / "cgroup.kill", "1");
    return false;
  }
  if (errno == ENOTEMPTY) {  // a plain directory standing in for a cgroup (tests)
    std::error_code ec;
    return fs::remove_all(dir, ec) > 0 && !ec;
  }
  return false;
}

int64_t CgroupLimits::OomKills(const fs::path& dir) {
  std::ifstream in(dir / "memory.events");
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

}  // namespace trainyard::executor
