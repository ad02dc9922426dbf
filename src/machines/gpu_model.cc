#include "machines/gpu_model.h"

#include <cctype>

namespace trainyard::machines {
namespace {

std::string Normalize(std::string_view name) {
  std::string s;
  for (char c : name) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view prefix : {"NVIDIA ", "TESLA "}) {
    if (s.starts_with(prefix)) s.erase(0, prefix.size());
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// How a normalized device name is recognised: equal to `name`, or (prefix) starting with it and
// followed by a separator; `with` / `without` must (not) occur in the rest.
struct Rule {
  std::string_view type;
  std::string_view name;
  bool prefix = false;
  std::string_view with = "";
  std::string_view without = "";
};

// Order matters for AcceleratorTypeOf: the first type that matches is the device's.
constexpr Rule kRules[] = {
    {"NVIDIA_TESLA_T4", "T4"},
    {"NVIDIA_TESLA_P4", "P4"},
    {"NVIDIA_TESLA_K80", "K80"},
    {"NVIDIA_TESLA_P100", "P100", true},
    {"NVIDIA_TESLA_V100", "V100", true},
    {"NVIDIA_A100_80GB", "A100", true, "80GB"},
    {"NVIDIA_TESLA_A100", "A100", true, "", "80GB"},
    {"NVIDIA_L4", "L4"},
    {"NVIDIA_H100_80GB", "H100", true},
    {"NVIDIA_H100_MEGA_80GB", "H100", true},
    {"NVIDIA_H200_141GB", "H200", true},
    {"NVIDIA_B200", "B200", true},    // "NVIDIA B200"
    {"NVIDIA_GB200", "GB200", true},  // "NVIDIA GB200"
};

bool Matches(const Rule& rule, const std::string& device) {
  if (!rule.prefix) return device == rule.name;
  if (!device.starts_with(rule.name)) return false;
  std::string_view rest = std::string_view(device).substr(rule.name.size());
  // "H100 80GB HBM3", "A100-SXM4-40GB": the model ends at a separator ("H1000" is not an H100).
  if (!rest.empty() && rest[0] != ' ' && rest[0] != '-') return false;
  if (!rule.with.empty() && rest.find(rule.with) == std::string_view::npos) return false;
  if (!rule.without.empty() && rest.find(rule.without) != std::string_view::npos) return false;
  return true;
}

}  // namespace

bool GpuServes(std::string_view accelerator_type, std::string_view device_name) {
  if (device_name == kAnyGpuModel) return true;
  std::string device = Normalize(device_name);
  for (const Rule& rule : kRules) {
    if (rule.type == accelerator_type && Matches(rule, device)) return true;
  }
  return false;
}

std::string AcceleratorTypeOf(std::string_view device_name) {
  std::string device = Normalize(device_name);
  for (const Rule& rule : kRules) {
    if (Matches(rule, device)) return std::string(rule.type);
  }
  return "";
}

}  // namespace trainyard::machines
