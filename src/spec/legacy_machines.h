// What AI Platform Training's machine vocabulary means in Compute Engine terms: its scale tiers
// (TrainingInput.scaleTier) and its legacy machine names (masterType: standard, complex_model_m,
// standard_gpu, ...), from Google's AI Platform Training documentation ("Specifying machine
// types or scale tiers"; the tables are in docs/api.md, "Coming from AI Platform Training").
// Compute Engine names (n1-standard-8, a2-highgpu-1g, ...) are not here: they pass through to
// the executor's machine catalog as on Vertex.
//
// The tables themselves are the machine catalog's (machines/legacy_machines.h, their one owner);
// these functions give the translation (legacy_translation.h) the names it works with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/legacy_job.h"

namespace trainyard::spec {

// A Compute Engine machine and the GPUs that come with it.
struct LegacyMachine {
  std::string machine_type;      // "n1-highcpu-16"
  std::string accelerator_type;  // "NVIDIA_TESLA_K80"; "" = none
  int32_t accelerator_count = 0;
};

// The machine a legacy name stands for ("complex_model_m_gpu" -> n1-standard-16 with 4 K80s);
// nullopt for a name that is not a legacy one (a Compute Engine name, used as it is, or
// "cloud_tpu", which the translation refuses).
std::optional<LegacyMachine> LegacyMachineType(std::string_view name);
// The legacy names, in the documentation's order (for messages and docs).
std::vector<std::string> LegacyMachineNames();

// What a fixed scale tier runs, in legacy machine names: the master, then workers and parameter
// servers (count 0 = none).
struct ScaleTierPreset {
  std::string master;
  int64_t worker_count = 0;
  std::string worker;
  int64_t parameter_server_count = 0;
  std::string parameter_server;
};
// BASIC, BASIC_GPU, STANDARD_1, PREMIUM_1; nullopt for CUSTOM (the request names its machines)
// and BASIC_TPU (TPUs are not served).
std::optional<ScaleTierPreset> ScaleTierPresetOf(ScaleTier tier);

}  // namespace trainyard::spec
