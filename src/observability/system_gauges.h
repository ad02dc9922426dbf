// What /metrics reports about the machine the server runs on: the free space of its volumes (the
// data dir, the bucket root) and the host's CPUs, memory and GPUs. Each source is a function
// ServerMetrics takes (server_metrics.h), so tests inject a full disk or any host.
//
// Thread-safety: the functions here keep no state and may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

#include "common/command_runner.h"
#include "common/status.h"

namespace trainyard::observability {

// A file system, as statvfs sees it.
struct DiskUsage {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;  // writable by the server's user (f_bavail, df's "Avail")
  uint64_t total_inodes = 0;
  uint64_t free_inodes = 0;  // f_favail
};
using DiskStatFn = std::function<StatusOr<DiskUsage>(const std::filesystem::path&)>;

// statvfs(path). UNAVAILABLE naming the path and errno's text when it fails (e.g. missing).
StatusOr<DiskUsage> StatDisk(const std::filesystem::path& path);

// The host the server runs on.
struct HostCapacity {
  int cpus = 0;                         // CPUs this process may use (sched_getaffinity)
  uint64_t memory_bytes = 0;            // MemTotal
  uint64_t memory_available_bytes = 0;  // MemAvailable: what can be given out without swapping
  std::optional<int> gpus;              // nvidia-smi's GPUs; unset = not known (yet)
};
using HostFn = std::function<StatusOr<HostCapacity>()>;

// MemTotal and MemAvailable of /proc/meminfo text, in bytes (the file says kB).
// INVALID_ARGUMENT naming the missing line.
StatusOr<HostCapacity> ParseMemInfo(std::string_view meminfo);

// The GPUs `nvidia-smi --list-gpus` lists (one "GPU N: ..." line each); 0 when nvidia-smi is not
// installed; UNAVAILABLE when it fails or takes longer than `timeout`.
StatusOr<int> CountNvidiaGpus(CommandRunner& runner, std::chrono::milliseconds timeout);

// The real host: CPUs and memory read at every call (cheap), GPUs counted once with nvidia-smi
// (at the first call: it takes a while and GPUs do not come and go). An error of /proc/meminfo
// is returned; one of nvidia-smi leaves `gpus` unset.
HostFn RealHost();

}  // namespace trainyard::observability
