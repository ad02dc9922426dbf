#include "local_executor/cgroup_limits.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
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

// A cgroup v1 hierarchy from /proc/self/mountinfo.
struct V1Mount {
  fs::path root;   // the cgroup path mounted (field 4): "/" unless in a container
  fs::path point;  // where (field 5)
  std::set<std::string> controllers;
};

// mountinfo escapes space, tab, newline and backslash as \ooo octal.
std::string Unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    const std::string code = field.substr(i + 1, 3);
    if (field[i] == '\\' && code.size() == 3 &&
        code.find_first_not_of("01234567") == std::string::npos) {
      out += static_cast<char>(std::stoi(code, nullptr, 8));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

std::set<std::string> SplitCommas(const std::string& list) {
  std::set<std::string> out;
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) out.insert(item);
  return out;
}

// "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory": after the optional
// fields and " - ", the file system type (cgroup, not cgroup2) and the super options, which name
// the controllers.
std::vector<V1Mount> ReadV1Mounts(const fs::path& mountinfo) {
  std::vector<V1Mount> out;
  std::ifstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point, word, fstype, source, options;
    fields >> id >> parent >> dev >> root >> point;
    while (fields >> word && word != "-") {
    }
    if (!(fields >> fstype >> source >> options) || fstype != "cgroup") continue;
    out.push_back({Unescape(root), Unescape(point), SplitCommas(options)});
  }
  return out;
}

// controller -> the server's cgroup path in its v1 hierarchy ("4:memory:/a/b", "2:cpu,cpuacct:/").
std::map<std::string, std::string> OwnV1Cgroups(const fs::path& proc_self_cgroup) {
  std::map<std::string, std::string> out;
  std::ifstream in(proc_self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    for (const auto& c : SplitCommas(line.substr(a + 1, b - a - 1))) out[c] = line.substr(b + 1);
  }
  return out;
}

// Best effort: the cgroup files that hold a counter. -1 when absent.
int64_t ReadNumber(const fs::path& file) {
  std::ifstream in(file);
  int64_t value = -1;
  if (!(in >> value)) return -1;
  return value;
}

// `key` in a "key value" per line file (memory.events, memory.oom_control); -1 when absent.
int64_t ReadKey(const fs::path& file, const std::string& key) {
  std::ifstream in(file);
  std::string k;
  int64_t value = 0;
  while (in >> k >> value) {
    if (k == key) return value;
  }
  return -1;
}

// The server's cgroup v2 path ("0::/system.slice/x.service" -> "/system.slice/x.service");
// empty without a v2 hierarchy.
std::string OwnV2Cgroup(const fs::path& proc_self_cgroup) {
  std::string own;
  std::ifstream in(proc_self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("0::")) own = line.substr(3);
  }
  return own;
}

// A delegated cgroup's base: the server already in its "server" leaf means the one above it.
fs::path StripServerLeaf(const fs::path& dir) {
  return dir.filename() == "server" ? dir.parent_path() : dir;
}

// Delegated mode: moves every other process found in each base into <base>/supervisors, then
// this process into <base>/server (a cgroup.procs write of "0" moves the whole process).
Status EnterServerLeaf(const std::vector<fs::path>& bases) {
  for (const fs::path& base : bases) {
    for (const char* leaf : {"server", "supervisors"}) {
      const fs::path dir = base / leaf;
      if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        return IoError("cannot create cgroup " + dir.string() + ": " + Errno());
      }
    }
    std::vector<pid_t> others;
    {
      std::ifstream in(base / "cgroup.procs");
      pid_t pid = 0;
      while (in >> pid) {
        if (pid != ::getpid()) others.push_back(pid);
      }
    }
    // A process gone meanwhile (ESRCH) is fine; one that cannot move stays where it is.
    for (pid_t pid : others) {
      (void)WriteCgroupFile(base / "supervisors" / "cgroup.procs", std::to_string(pid));
    }
    TY_RETURN_IF_ERROR(WriteCgroupFile(base / "server" / "cgroup.procs", "0"));
  }
  return Status::Ok();
}

}  // namespace

bool CgroupMemoryReport::OomKilled(int exit_code) const {
  if (exit_code != 128 + SIGKILL) return false;
  return oom_kills > 0 || (oom_kills < 0 && failcnt > 0);
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 0) return "unknown";
  char buf[32];
  if (bytes >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return buf;
}

std::string OomMessage(const std::string& replica, const CgroupMemoryReport& m,
                       const std::string& machine_type) {
  std::string used = "it ran out of the memory of";
  if (m.limit_bytes >= 0 && m.peak_bytes >= 0) {
    used =
        "it used " + FormatBytes(m.peak_bytes) + " of its " + FormatBytes(m.limit_bytes) + " limit";
  } else if (m.limit_bytes >= 0) {
    used = "it reached its " + FormatBytes(m.limit_bytes) + " limit";
  }
  return replica + " was killed by the out-of-memory killer: " + used + " (" + machine_type +
         "); pick a machine type with more memory";
}

CgroupLimits::CgroupLimits(std::string why_not) : why_not_(std::move(why_not)) {}

CgroupLimits CgroupLimits::Probe(const CgroupOptions& o) {
  if (!o.enabled) return CgroupLimits("cgroup limits are turned off by configuration");
  bool v2 = true;
  if (o.check_filesystem) {
    struct statfs st {};
    v2 = ::statfs(o.mount.c_str(), &st) == 0 && st.f_type == kCgroup2Magic;
  }
  if (o.delegated) return ProbeDelegated(o, v2);
  return v2 ? ProbeV2(o) : ProbeV1(o);
}

CgroupLimits CgroupLimits::ProbeDelegated(const CgroupOptions& o, bool v2) {
  CgroupOptions inner = o;
  inner.delegated = false;
  std::vector<fs::path> bases;
  if (v2) {
    const std::string own = OwnV2Cgroup(o.proc_self_cgroup);
    if (own.empty() && o.parent.empty()) return ProbeV2(inner);  // says why
    fs::path base = o.parent.empty()         ? o.mount / fs::path(own).relative_path()
                    : o.parent.is_absolute() ? o.parent
                                             : o.mount / o.parent;
    bases.push_back(StripServerLeaf(base.lexically_normal()));
    if (!fs::exists(bases.back()) && ::mkdir(bases.back().c_str(), 0755) != 0) {
      return CgroupLimits("cannot create cgroup " + bases.back().string() + ": " + Errno());
    }
  } else {
    CgroupLimits v1 = ProbeV1(inner);  // finds (and makes) the memory and cpu parents
    if (!v1.enabled()) return v1;
    for (const fs::path& p : v1.parents_) bases.push_back(StripServerLeaf(p));
  }
  if (Status s = EnterServerLeaf(bases); !s.ok()) {
    return CgroupLimits("--cgroup-delegated: the server cannot move into its leaf cgroup: " +
                        s.message());
  }
  CgroupLimits limits("");
  if (v2) {
    inner.parent = bases.front();
    limits = ProbeV2(inner);
  } else {
    limits.version_ = CgroupVersion::kV1;
    limits.parents_ = bases;
  }
  limits.delegated_ = true;
  for (const fs::path& base : bases) limits.supervisors_.push_back(base / "supervisors");
  return limits;
}

CgroupLimits CgroupLimits::ProbeV1(const CgroupOptions& o) {
  const std::vector<V1Mount> mounts = ReadV1Mounts(o.proc_self_mountinfo);
  const std::map<std::string, std::string> own = OwnV1Cgroups(o.proc_self_cgroup);
  if (o.parent.native().starts_with(o.mount.native() + "/")) {
    return CgroupLimits("--cgroup-parent " + o.parent.string() +
                        " is a cgroup v2 directory, but this host has cgroup v1: give a cgroup "
                        "path such as /trainyard, made in the memory and cpu hierarchies");
  }
  std::vector<fs::path> parents;
  for (const std::string controller : {"memory", "cpu"}) {
    auto m = std::find_if(mounts.begin(), mounts.end(),
                          [&](const V1Mount& v) { return v.controllers.count(controller); });
    if (m == mounts.end()) {
      return CgroupLimits(o.mount.string() + " is not a cgroup v2 mount and " +
                          o.proc_self_mountinfo.string() + " shows no cgroup v1 " + controller +
                          " controller; mount one (or boot with systemd.unified_cgroup_"
                          "hierarchy=1) to get memory/CPU limits");
    }
    fs::path cgroup = o.parent;
    if (cgroup.empty() && own.count(controller)) {
      // The cgroup path is relative to the hierarchy's root; a container mounts its own.
      cgroup = fs::path(own.at(controller)).lexically_relative(m->root);
      if (cgroup.empty() || cgroup.native().starts_with("..")) cgroup = own.at(controller);
    }
    fs::path parent = (m->point / cgroup.relative_path()).lexically_normal();
    if (!parent.has_filename()) parent = parent.parent_path();  // "<point>/." -> "<point>"
    if (std::find(parents.begin(), parents.end(), parent) == parents.end()) {
      parents.push_back(parent);
    }
  }
  const std::string fix =
      o.parent.empty() ? "; give it a writable cgroup with --cgroup-parent" : "";
  for (const fs::path& parent : parents) {
    std::error_code ec;
    if (!o.parent.empty() && !fs::exists(parent) && ::mkdir(parent.c_str(), 0755) != 0) {
      return CgroupLimits("cannot create cgroup " + parent.string() + ": " + Errno());
    }
    fs::path probe = parent / ("trainyard-probe-" + std::to_string(::getpid()));
    if (::mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) {
      return CgroupLimits("cannot create cgroups in " + parent.string() + ": " + Errno() + fix);
    }
    fs::remove(probe, ec);
  }
  CgroupLimits limits("");
  limits.version_ = CgroupVersion::kV1;
  limits.parents_ = std::move(parents);
  return limits;
}

CgroupLimits CgroupLimits::ProbeV2(const CgroupOptions& o) {
  const std::string own = OwnV2Cgroup(o.proc_self_cgroup);
  if (own.empty()) {
    return CgroupLimits("this host has no cgroup v2 hierarchy (" + o.proc_self_cgroup.string() +
                        " has no '0::' entry: cgroup v1); boot with systemd.unified_cgroup_"
                        "hierarchy=1 to get memory/CPU limits");
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
  limits.version_ = CgroupVersion::kV2;
  limits.parents_ = {parent};
  return limits;
}

std::string CgroupLimits::LimitFiles() const {
  return version_ == CgroupVersion::kV1 ? "memory.limit_in_bytes, cpu.cfs_quota_us"
                                        : "memory.max, cpu.max";
}

StatusOr<std::vector<fs::path>> CgroupLimits::MakeDirs(const std::string& name) const {
  std::vector<fs::path> dirs;
  for (const fs::path& parent : parents_) {
    fs::path dir = parent / name;
    // Names are unique per attempt, so an existing one is this attempt's, left by a server that
    // died while starting it: reuse it.
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return IoError("cannot create cgroup " + dir.string() + ": " + Errno());
    }
    dirs.push_back(dir);
  }
  return dirs;
}

StatusOr<std::vector<fs::path>> CgroupLimits::Create(const std::string& name, double memory_gib,
                                                     double cpus) const {
  if (!enabled()) return FailedPreconditionError("cgroup limits are off: " + why_not_);
  TY_ASSIGN_OR_RETURN(std::vector<fs::path> dirs, MakeDirs(name));
  TY_RETURN_IF_ERROR(WriteLimits(dirs, memory_gib, cpus));
  return dirs;
}

Status CgroupLimits::Reapply(const std::string& name, double memory_gib, double cpus,
                             std::vector<fs::path>* dirs) const {
  dirs->clear();
  for (const fs::path& parent : parents_) {
    if (fs::exists(parent / name)) dirs->push_back(parent / name);
  }
  if (dirs->empty()) return Status::Ok();
  if (dirs->size() != parents_.size()) {
    return NotFoundError("cgroup " + name + " is missing in some of " + parents_.front().string() +
                         ", " + parents_.back().string());
  }
  return WriteLimits(*dirs, memory_gib, cpus);
}

Status CgroupLimits::ReleaseControllers() const {
  if (!delegated_ || version_ != CgroupVersion::kV2 || parents_.empty()) return Status::Ok();
  return WriteCgroupFile(parent() / "cgroup.subtree_control", "-memory -cpu");
}

Status CgroupLimits::WriteLimits(const std::vector<fs::path>& dirs, double memory_gib,
                                 double cpus) const {
  const std::string bytes =
      std::to_string(static_cast<int64_t>(std::floor(memory_gib * 1024 * 1024 * 1024)));
  const int64_t quota = std::max<int64_t>(std::ceil(cpus * kCpuPeriodUs), 1000);
  const fs::path& mem = dirs.front();
  const fs::path& cpu = dirs.back();
  if (version_ == CgroupVersion::kV2) {
    TY_RETURN_IF_ERROR(WriteCgroupFile(mem / "memory.max", bytes));
    return WriteCgroupFile(cpu / "cpu.max",
                           std::to_string(quota) + " " + std::to_string(kCpuPeriodUs));
  }
  // memsw (memory + swap) must stay >= the memory limit, so it is written second; without it a
  // replica over its limit would swap instead of being OOM-killed.
  TY_RETURN_IF_ERROR(WriteCgroupFile(mem / "memory.limit_in_bytes", bytes));
  if (fs::exists(mem / "memory.memsw.limit_in_bytes")) {
    TY_RETURN_IF_ERROR(WriteCgroupFile(mem / "memory.memsw.limit_in_bytes", bytes));
  }
  // v1 refuses (EINVAL) a child quota above its parent's: a replica asking for more CPUs than
  // the server's cgroup has gets all of them, as on v2 where the parent's limit simply applies.
  const int64_t parent_quota = ReadNumber(cpu.parent_path() / "cpu.cfs_quota_us");
  const int64_t parent_period = ReadNumber(cpu.parent_path() / "cpu.cfs_period_us");
  int64_t capped = quota;
  if (parent_quota > 0 && parent_period > 0) {
    capped = std::min(quota, parent_quota * kCpuPeriodUs / parent_period);
  }
  TY_RETURN_IF_ERROR(WriteCgroupFile(cpu / "cpu.cfs_period_us", std::to_string(kCpuPeriodUs)));
  return WriteCgroupFile(cpu / "cpu.cfs_quota_us", std::to_string(capped));
}

namespace {

// Kills what is left in a cgroup so that it can be removed: v2 has cgroup.kill, v1 only the
// list of its processes (racing with forks; the caller retries).
void KillMembers(const fs::path& dir) {
  if (fs::exists(dir / "cgroup.kill")) {
    (void)WriteCgroupFile(dir / "cgroup.kill", "1");
    return;
  }
  std::ifstream in(dir / "cgroup.procs");
  pid_t pid = 0;
  while (in >> pid) {
    if (pid > 0) ::kill(pid, SIGKILL);
  }
}

bool RemoveOne(const fs::path& dir) {
  if (dir.empty()) return true;
  // A real cgroup directory is removed with rmdir(2) although it lists files.
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
  if (errno == EBUSY) {
    // Nothing of a replica may outlive it (as when a Vertex VM goes away).
    KillMembers(dir);
    return false;
  }
  if (errno == ENOTEMPTY) {  // a plain directory standing in for a cgroup (tests)
    std::error_code ec;
    return fs::remove_all(dir, ec) > 0 && !ec;
  }
  return false;
}

}  // namespace

bool CgroupLimits::Remove(const std::vector<fs::path>& dirs) {
  bool all = true;
  for (const fs::path& dir : dirs) all = RemoveOne(dir) && all;
  return all;
}

CgroupMemoryReport CgroupLimits::ReadMemory(const fs::path& dir) {
  CgroupMemoryReport r;
  if (fs::exists(dir / "memory.oom_control")) {  // v1
    r.oom_kills = ReadKey(dir / "memory.oom_control", "oom_kill");
    r.failcnt = ReadNumber(dir / "memory.failcnt");
    r.peak_bytes = ReadNumber(dir / "memory.max_usage_in_bytes");
    r.limit_bytes = ReadNumber(dir / "memory.limit_in_bytes");
    return r;
  }
  r.oom_kills = std::max<int64_t>(ReadKey(dir / "memory.events", "oom_kill"), 0);
  r.peak_bytes = ReadNumber(dir / "memory.peak");
  r.limit_bytes = ReadNumber(dir / "memory.max");  // "max" (no limit) reads as -1
  return r;
}

}  // namespace trainyard::executor
