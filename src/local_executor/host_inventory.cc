#include "local_executor/host_inventory.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/path_lookup.h"
#include "machines/gpu_model.h"

namespace trainyard::executor {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::string FormatGib(double gib) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", gib);
  return buf;
}

std::string HostInventory::ToString() const {
  std::string out = std::to_string(cpus) + " vCPUs, " + FormatGib(memory_gib) + " GiB, " +
                    std::to_string(gpus.size()) + (gpus.size() == 1 ? " GPU" : " GPUs");
  if (!gpus.empty()) {
    out += " (";
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (i > 0) out += ", ";
      out += std::to_string(gpus[i].index) + ": " + gpus[i].name + " " +
             FormatGib(gpus[i].memory_gib) + " GiB";
    }
    out += ")";
  }
  return out;
}

StatusOr<std::vector<GpuDevice>> ParseNvidiaSmiCsv(std::string_view text) {
  std::vector<GpuDevice> gpus;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    size_t c1 = line.find(',');
    size_t c2 = line.rfind(',');
    auto bad = [&] {
      return InvalidArgumentError("nvidia-smi output line " + std::to_string(line_no) + " '" +
                                  std::string(line) + "': expected 'index, name, memory MiB'");
    };
    if (c1 == std::string_view::npos || c2 == c1) return bad();
    GpuDevice gpu;
    std::string index(Trim(line.substr(0, c1)));
    gpu.name = std::string(Trim(line.substr(c1 + 1, c2 - c1 - 1)));
    std::string memory(Trim(line.substr(c2 + 1)));
    char* end = nullptr;
    long idx = std::strtol(index.c_str(), &end, 10);
    if (index.empty() || *end != '\0' || idx < 0) return bad();
    gpu.index = static_cast<int>(idx);
    double mib = std::strtod(memory.c_str(), &end);
    std::string_view unit = Trim(end);
    if (end == memory.c_str() || (unit != "MiB" && !unit.empty())) return bad();
    gpu.memory_gib = mib / 1024.0;
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

StatusOr<double> ParseMemTotalGib(std::string_view meminfo) {
  size_t pos = meminfo.find("MemTotal:");
  if (pos == std::string_view::npos) return InvalidArgumentError("no MemTotal in /proc/meminfo");
  std::string rest(meminfo.substr(pos + 9, 64));
  char* end = nullptr;
  double kib = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str() || kib <= 0) {
    return InvalidArgumentError("unreadable MemTotal in /proc/meminfo");
  }
  return kib / (1024.0 * 1024.0);
}

HostInventory DetectHostInventory(const InventoryOverrides& overrides,
                                  std::vector<std::string>* warnings) {
  auto warn = [&](std::string w) {
    if (warnings != nullptr) warnings->push_back(std::move(w));
  };
  HostInventory inv;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    inv.cpus = CPU_COUNT(&set);
    for (int id = 0; id < CPU_SETSIZE; ++id) {
      if (CPU_ISSET(id, &set)) inv.cpu_ids.push_back(id);
    }
  } else {
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    inv.cpus = n > 0 ? static_cast<int>(n) : 1;
  }
  std::ifstream meminfo("/proc/meminfo");
  std::stringstream ss;
  ss << meminfo.rdbuf();
  if (auto mem = ParseMemTotalGib(ss.str()); mem.ok()) {
    inv.memory_gib = *mem;
  } else {
    inv.memory_gib = 1;
    warn("cannot read host memory (" + mem.status().message() + "); assuming 1 GiB");
  }
  if (!(overrides.gpus && *overrides.gpus == 0) && OnPath("nvidia-smi")) {
    std::string out;
    if (FILE* p = ::popen(
            "nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader 2>/dev/null",
            "r")) {
      std::array<char, 4096> buf;
      size_t n;
      while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
      int rc = ::pclose(p);
      if (rc != 0) {
        warn("nvidia-smi failed (exit code " +
             std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc)) +
             "); assuming no GPUs");
      } else if (auto gpus = ParseNvidiaSmiCsv(out); gpus.ok()) {
        inv.gpus = *std::move(gpus);
      } else {
        warn(gpus.status().message() + "; assuming no GPUs");
      }
    }
  }
  if (overrides.cpus) {
    if (*overrides.cpus < static_cast<int>(inv.cpu_ids.size())) {
      inv.cpu_ids.resize(std::max(0, *overrides.cpus));
    } else if (*overrides.cpus > static_cast<int>(inv.cpu_ids.size())) {
      warn("--cpus " + std::to_string(*overrides.cpus) + " is more than the " +
           std::to_string(inv.cpu_ids.size()) +
           " CPUs this process may run on; replicas are not pinned to CPUs");
    }
    inv.cpus = *overrides.cpus;
  }
  if (overrides.memory_gib) inv.memory_gib = *overrides.memory_gib;
  if (overrides.gpus) {
    int want = *overrides.gpus;
    if (static_cast<int>(inv.gpus.size()) > want) inv.gpus.resize(want);
    while (static_cast<int>(inv.gpus.size()) < want) {
      int index = inv.gpus.empty() ? 0 : inv.gpus.back().index + 1;
      inv.gpus.push_back({index, std::string(machines::kAnyGpuModel), 0});
    }
  }
  return inv;
}

}  // namespace trainyard::executor
