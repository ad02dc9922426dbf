// HostInventory: what this machine can run (CPUs, memory, GPUs), detected from /proc and
// nvidia-smi, with explicit overrides from the server's configuration.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::executor {

struct GpuDevice {
  int index = 0;          // the CUDA device index (what CUDA_VISIBLE_DEVICES takes)
  std::string name;       // "Tesla T4", "NVIDIA H100 80GB HBM3"
  double memory_gib = 0;  // total memory
};

struct HostInventory {
  int cpus = 0;
  double memory_gib = 0;
  std::vector<GpuDevice> gpus;
  // The CPU ids replicas can be pinned to (sched_getaffinity of the server). Detection fills
  // `cpus` of them; empty, or fewer than `cpus` (a --cpus override larger than the CPUs this
  // process may use), means replicas are not pinned.
  std::vector<int> cpu_ids;

  std::string ToString() const;  // "8 vCPUs, 31.2 GiB, 1 GPU (0: Tesla T4 15.0 GiB)"
};

// Parses `nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader` output, lines like
// "0, Tesla T4, 15360 MiB". INVALID_ARGUMENT naming the line for anything else.
StatusOr<std::vector<GpuDevice>> ParseNvidiaSmiCsv(std::string_view text);

// Parses the MemTotal line of /proc/meminfo into GiB. INVALID_ARGUMENT if absent.
StatusOr<double> ParseMemTotalGib(std::string_view meminfo);

// Memory as the inventory and admission messages print it: one decimal ("15.0").
std::string FormatGib(double gib);

struct InventoryOverrides {
  std::optional<int> cpus;
  std::optional<double> memory_gib;
  std::optional<int> gpus;  // use only the first N detected GPUs; 0 = hide all GPUs
};

// Detects the host: CPUs usable by this process (sched_getaffinity), MemTotal from /proc/meminfo,
// GPUs from nvidia-smi when it is on PATH (none otherwise). An override replaces the detected
// value (a CPU override keeps the first N CPU ids; one larger than the detected count leaves
// replicas unpinned, with a warning); a GPU override larger than the detected count adds
// placeholder devices named "configured GPU", which serve every acceleratorType
// (machines/gpu_model.h; for hosts whose nvidia-smi is missing from PATH). Never fails: an
// unreadable source falls back to 1 CPU / 1 GiB / no GPUs and the problem is appended to
// `warnings`.
HostInventory DetectHostInventory(const InventoryOverrides& overrides,
                                  std::vector<std::string>* warnings = nullptr);

}  // namespace trainyard::executor
