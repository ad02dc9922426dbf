#include "spec/legacy_machines.h"

#include <array>

namespace trainyard::spec {
namespace {

struct Entry {
  std::string_view name;
  std::string_view machine_type;
  std::string_view accelerator_type;
  int32_t accelerator_count;
};

// AI Platform Training's "legacy machine types" and their Compute Engine equivalents.
constexpr std::array<Entry, 14> kLegacyMachines = {{
    {"standard", "n1-standard-4", "", 0},
    {"large_model", "n1-highmem-8", "", 0},
    {"complex_model_s", "n1-highcpu-8", "", 0},
    {"complex_model_m", "n1-highcpu-16", "", 0},
    {"complex_model_l", "n1-highcpu-32", "", 0},
    {"standard_gpu", "n1-standard-8", "NVIDIA_TESLA_K80", 1},
    {"complex_model_m_gpu", "n1-standard-16", "NVIDIA_TESLA_K80", 4},
    {"complex_model_l_gpu", "n1-standard-32", "NVIDIA_TESLA_K80", 8},
    {"standard_p100", "n1-standard-8", "NVIDIA_TESLA_P100", 1},
    {"complex_model_m_p100", "n1-standard-16", "NVIDIA_TESLA_P100", 4},
    {"standard_v100", "n1-standard-8", "NVIDIA_TESLA_V100", 1},
    {"large_model_v100", "n1-highmem-8", "NVIDIA_TESLA_V100", 1},
    {"complex_model_m_v100", "n1-standard-16", "NVIDIA_TESLA_V100", 4},
    {"complex_model_l_v100", "n1-standard-32", "NVIDIA_TESLA_V100", 8},
}};

}  // namespace

std::optional<LegacyMachine> LegacyMachineType(std::string_view name) {
  for (const Entry& e : kLegacyMachines) {
    if (e.name == name) {
      return LegacyMachine{std::string(e.machine_type), std::string(e.accelerator_type),
                           e.accelerator_count};
    }
  }
  return std::nullopt;
}

std::vector<std::string> LegacyMachineNames() {
  std::vector<std::string> names;
  for (const Entry& e : kLegacyMachines) names.emplace_back(e.name);
  return names;
}

std::optional<ScaleTierPreset> ScaleTierPresetOf(ScaleTier tier) {
  switch (tier) {
    case ScaleTier::kBasic:
      return ScaleTierPreset{"standard", 0, "", 0, ""};
    case ScaleTier::kBasicGpu:
      return ScaleTierPreset{"standard_gpu", 0, "", 0, ""};
    case ScaleTier::kStandard1:
      return ScaleTierPreset{"complex_model_s", 4, "complex_model_s", 3, "standard"};
    case ScaleTier::kPremium1:
      return ScaleTierPreset{"complex_model_m", 19, "complex_model_m", 11, "large_model"};
    case ScaleTier::kBasicTpu:
    case ScaleTier::kCustom:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace trainyard::spec
