#include "machines/legacy_machines.h"

#include <algorithm>

namespace trainyard::machines {
namespace {

constexpr char kK80[] = "NVIDIA_TESLA_K80";
constexpr char kP100[] = "NVIDIA_TESLA_P100";
constexpr char kV100[] = "NVIDIA_TESLA_V100";

MachineRequest Of(std::string_view name) { return FindLegacyMachine(name)->machine; }

}  // namespace

const std::vector<LegacyMachine>& LegacyMachines() {
  static const std::vector<LegacyMachine> machines = {
      {"standard", {"n1-standard-4", "", 0}},
      {"large_model", {"n1-highmem-8", "", 0}},
      {"complex_model_s", {"n1-highcpu-8", "", 0}},
      {"complex_model_m", {"n1-highcpu-16", "", 0}},
      {"complex_model_l", {"n1-highcpu-32", "", 0}},
      {"standard_gpu", {"n1-standard-8", kK80, 1}},
      {"complex_model_m_gpu", {"n1-standard-16", kK80, 4}},
      {"complex_model_l_gpu", {"n1-standard-32", kK80, 8}},
      {"standard_p100", {"n1-standard-8", kP100, 1}},
      {"complex_model_m_p100", {"n1-standard-16", kP100, 4}},
      {"standard_v100", {"n1-standard-8", kV100, 1}},
      {"large_model_v100", {"n1-highmem-8", kV100, 1}},
      {"complex_model_m_v100", {"n1-standard-16", kV100, 4}},
      {"complex_model_l_v100", {"n1-standard-32", kV100, 8}},
  };
  return machines;
}

const LegacyMachine* FindLegacyMachine(std::string_view name) {
  const auto& all = LegacyMachines();
  auto it = std::find_if(all.begin(), all.end(), [&](const auto& m) { return m.name == name; });
  return it == all.end() ? nullptr : &*it;
}

StatusOr<MachineRequest> FromAiPlatformMachineType(std::string_view name, std::string_view field) {
  if (name == "cloud_tpu") {
    return InvalidArgumentError(std::string(field) +
                                ": cloud_tpu: TPUs are not supported by Trainyard; use a GPU "
                                "machine such as standard_gpu or n1-standard-8 with a GPU");
  }
  if (const LegacyMachine* legacy = FindLegacyMachine(name)) return legacy->machine;
  return MachineRequest{std::string(name), "", 0};
}

StatusOr<std::vector<ScaleTierPool>> ScaleTierPools(std::string_view tier, std::string_view field) {
  if (tier == "BASIC") return std::vector<ScaleTierPool>{{"master", Of("standard"), 1}};
  if (tier == "BASIC_GPU") return std::vector<ScaleTierPool>{{"master", Of("standard_gpu"), 1}};
  if (tier == "STANDARD_1") {
    return std::vector<ScaleTierPool>{{"master", Of("complex_model_s"), 1},
                                      {"worker", Of("complex_model_s"), 4},
                                      {"parameterServer", Of("standard"), 3}};
  }
  if (tier == "PREMIUM_1") {
    return std::vector<ScaleTierPool>{{"master", Of("complex_model_m"), 1},
                                      {"worker", Of("complex_model_m"), 19},
                                      {"parameterServer", Of("large_model"), 11}};
  }
  const std::string f(field);
  if (tier == "BASIC_TPU") {
    return InvalidArgumentError(f +
                                ": BASIC_TPU: TPUs are not supported by Trainyard; use "
                                "BASIC_GPU, or CUSTOM with a GPU masterType");
  }
  if (tier == "CUSTOM") {
    return InvalidArgumentError(f +
                                ": CUSTOM has no preset machines; set masterType (and "
                                "workerType/workerCount, parameterServerType/Count, ...)");
  }
  return InvalidArgumentError(f + ": unknown scale tier '" + std::string(tier) +
                              "'; use one of BASIC, BASIC_GPU, STANDARD_1, PREMIUM_1, CUSTOM");
}

}  // namespace trainyard::machines
