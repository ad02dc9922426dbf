// AI Platform Training's (ml.googleapis.com/v1, `gcloud ai-platform jobs`) legacy machine names
// and scale tiers, as the Vertex MachineSpecs they stand for, so a legacy job becomes worker pools
// the rest of Trainyard knows (MachineCatalog::Resolve validates and prices them).
//
// Legacy machines (https://cloud.google.com/ai-platform/training/docs/machine-types, "compare
// machine types"; the GPU variants are "a machine equivalent to X that also includes N GPUs"):
//   standard n1-standard-4, large_model n1-highmem-8, complex_model_s n1-highcpu-8,
//   complex_model_m n1-highcpu-16, complex_model_l n1-highcpu-32,
//   standard_gpu n1-standard-8 + 1 K80, complex_model_m_gpu n1-standard-16 + 4 K80,
//   complex_model_l_gpu n1-standard-32 + 8 K80, standard_p100 n1-standard-8 + 1 P100,
//   complex_model_m_p100 n1-standard-16 + 4 P100, standard_v100 n1-standard-8 + 1 V100,
//   large_model_v100 n1-highmem-8 + 1 V100, complex_model_m_v100 n1-standard-16 + 4 V100,
//   complex_model_l_v100 n1-standard-32 + 8 V100; cloud_tpu is refused.
// Scale tiers (same page, "scale tiers"): BASIC 1 x standard; BASIC_GPU 1 x standard_gpu;
// STANDARD_1 master complex_model_s + 4 workers complex_model_s + 3 parameter servers standard;
// PREMIUM_1 master complex_model_m + 19 workers complex_model_m + 11 parameter servers
// large_model; BASIC_TPU is refused; CUSTOM is no preset (the job names its machines).
//
// Thread-safety: immutable tables; every function is safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "machines/machine_catalog.h"

namespace trainyard::machines {

struct LegacyMachine {
  std::string name;        // "complex_model_m_gpu"
  MachineRequest machine;  // n1-standard-16 + 4 x NVIDIA_TESLA_K80
};

// Every legacy name, in the order of AI Platform's documentation (cloud_tpu excluded).
const std::vector<LegacyMachine>& LegacyMachines();

// nullptr when `name` is not a legacy machine name.
const LegacyMachine* FindLegacyMachine(std::string_view name);

// The MachineRequest a legacy job's masterType/workerType/... names: a legacy name's machine, or
// any other name unchanged (a Compute Engine type; MachineCatalog::Resolve judges it).
// INVALID_ARGUMENT naming `field` for cloud_tpu (TPUs are not supported).
StatusOr<MachineRequest> FromAiPlatformMachineType(std::string_view name, std::string_view field);

struct ScaleTierPool {
  std::string role;  // "master", "worker" or "parameterServer" (the legacy field prefix)
  MachineRequest machine;
  int replica_count = 0;
};

// The pools of a preset scale tier, master first. INVALID_ARGUMENT naming `field` (and the fix)
// for BASIC_TPU, CUSTOM (no preset: set masterType and the other *Type/*Count fields) and unknown
// tiers.
StatusOr<std::vector<ScaleTierPool>> ScaleTierPools(std::string_view tier, std::string_view field);

}  // namespace trainyard::machines
