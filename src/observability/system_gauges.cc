#include "observability/system_gauges.h"

#include <sched.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

#include "common/file_util.h"

namespace trainyard::observability {

StatusOr<DiskUsage> StatDisk(const std::filesystem::path& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0) {
    return UnavailableError("statvfs " + path.string() + ": " + std::strerror(errno));
  }
  DiskUsage d;
  d.total_bytes = static_cast<uint64_t>(s.f_blocks) * s.f_frsize;
  d.free_bytes = static_cast<uint64_t>(s.f_bavail) * s.f_frsize;
  d.total_inodes = s.f_files;
  d.free_inodes = s.f_favail;
  return d;
}

StatusOr<HostCapacity> ParseMemInfo(std::string_view meminfo) {
  std::optional<uint64_t> total, available;
  std::istringstream in{std::string(meminfo)};
  std::string key;
  uint64_t kib = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    if (!(fields >> key >> kib)) continue;
    if (key == "MemTotal:") total = kib * 1024;
    if (key == "MemAvailable:") available = kib * 1024;
  }
  if (!total) return InvalidArgumentError("/proc/meminfo has no MemTotal line");
  if (!available) return InvalidArgumentError("/proc/meminfo has no MemAvailable line");
  HostCapacity host;
  host.memory_bytes = *total;
  host.memory_available_bytes = *available;
  return host;
}

StatusOr<int> CountNvidiaGpus(CommandRunner& runner, std::chrono::milliseconds timeout) {
  auto r = runner.Run({"nvidia-smi", "--list-gpus"}, timeout);
  // Not installed: a host without NVIDIA GPUs (the local executor's inventory says the same).
  if (!r.ok() && r.status().code() == StatusCode::kUnavailable) return 0;
  if (!r.ok()) return UnavailableError(r.status().message());
  if (r->exit_code != 0) {
    return UnavailableError("nvidia-smi --list-gpus exited with code " +
                            std::to_string(r->exit_code) + ": " + LastNonEmptyLine(r->err));
  }
  int gpus = 0;
  std::istringstream in(r->out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("GPU ", 0) == 0) ++gpus;
  }
  return gpus;
}

HostFn RealHost() {
  // Shared by copies of the function; the first call that gets here counts the GPUs.
  struct Gpus {
    std::once_flag once;
    std::optional<int> count;
  };
  auto gpus = std::make_shared<Gpus>();
  return [gpus]() -> StatusOr<HostCapacity> {
    TY_ASSIGN_OR_RETURN(std::string meminfo, ReadFile("/proc/meminfo"));
    TY_ASSIGN_OR_RETURN(HostCapacity host, ParseMemInfo(meminfo));
    cpu_set_t set;
    CPU_ZERO(&set);
    host.cpus = ::sched_getaffinity(0, sizeof(set), &set) == 0
                    ? CPU_COUNT(&set)
                    : static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    std::call_once(gpus->once, [&] {
      auto n = CountNvidiaGpus(CommandRunner::Real(), std::chrono::seconds(10));
      if (n.ok()) gpus->count = *n;
    });
    host.gpus = gpus->count;
    return host;
  };
}

}  // namespace trainyard::observability
