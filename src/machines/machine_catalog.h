// MachineCatalog: the one owner of what a MachineSpec may name — Vertex AI / Compute Engine
// machine types (n1, n2, e2, c2 general-purpose families; a2, a3, g2 accelerator-optimized types
// with their bundled GPUs), accelerator types (the Vertex AcceleratorType enum, names and
// numbers), their sizes and estimated hourly prices — and the one place a spec's
// (machineType, acceleratorType, acceleratorCount) is validated and resolved: Resolve().
// Spec validation (every executor refuses the same specs at create), the executors (sizes and
// GPU counts), cost estimates and the console's machine list all read it. nvidia-smi product
// names of each accelerator type: gpu_model.h; AI Platform's legacy names: legacy_machines.h.
//
// Prices are estimates in USD per hour (us-central1, on-demand, Vertex AI custom training); see
// builtin_catalog.cc for the sources. Machine prices exclude accelerators, which Vertex bills
// separately per GPU (also for a2/a3/g2 types that come with their GPUs). A price the catalog has
// no source for is std::nullopt, and so is every sum it is part of: no estimate is better than a
// made-up one.
//
// Thread-safety: a catalog is immutable; every method is safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace trainyard::machines {

struct MachineType {
  std::string name;  // "n1-standard-4"
  int vcpus = 0;
  double memory_gib = 0;
  std::optional<double> usd_per_hour;  // the machine alone, without accelerators
  // Accelerator-optimized types (a2-*, a3-*, a4-*, g2-*) come with a fixed number of GPUs of one
  // type; empty / 0 for general-purpose types, which take any GPU acceleratorType the spec names
  // (Vertex attaches GPUs to n1 only; Trainyard also lets other hosts' GPUs serve other types).
  std::string bundled_accelerator;
  int bundled_accelerator_count = 0;
};

struct AcceleratorType {
  std::string name;     // "NVIDIA_TESLA_T4": the MachineSpec.acceleratorType enum name
  int vertex_enum = 0;  // its number in google.cloud.aiplatform.v1.AcceleratorType
  double memory_gib = 0;
  std::optional<double> usd_per_hour;  // per accelerator
  bool tpu = false;                    // a Cloud TPU: named by the API, refused by Trainyard
};

// What a MachineSpec asks for.
struct MachineRequest {
  std::string machine_type;      // required
  std::string accelerator_type;  // "" = none, or the machine type's bundled GPUs
  int accelerator_count = 0;
};

// A valid request with everything a consumer needs filled in.
struct ResolvedMachine {
  std::string machine_type;
  int vcpus = 0;
  double memory_gib = 0;
  std::string accelerator_type;       // requested or bundled; "" = none
  int accelerator_count = 0;          // 0 when accelerator_type is ""
  bool accelerators_bundled = false;  // they come with the machine type (a2/a3/g2)
  std::optional<double> hourly_usd;   // machine + accelerator_count x accelerator price
};

// One row of the machine list (the console's, docs/api.md's).
struct MachineListing {
  std::string name;
  int vcpus = 0;
  double memory_gib = 0;
  std::string bundled_accelerator;  // "" for general-purpose types
  int bundled_accelerator_count = 0;
  std::optional<double> hourly_usd;  // with the bundled accelerators
};

class MachineCatalog {
 public:
  // The built-in catalog (process-wide, immutable; builtin_catalog.cc).
  static const MachineCatalog& Default();

  MachineCatalog(std::vector<MachineType> machines, std::vector<AcceleratorType> accelerators);

  // Validates `request` and resolves it. `field` is the MachineSpec's path in errors, e.g.
  // "jobSpec.workerPoolSpecs[0].machineSpec". INVALID_ARGUMENT, naming the field and the fix, for:
  // an empty or unknown machineType (the message lists the valid ones, and names the Vertex type
  // for an AI Platform legacy name); acceleratorCount < 0; acceleratorType without a count or a
  // count without a type; a TPU; an unknown acceleratorType; accelerators other than the bundled
  // ones on an a2/a3/g2 type. Names are exact (case-sensitive, as in the Vertex API). An empty
  // acceleratorType with count 0 on a bundled type resolves to its bundled GPUs.
  StatusOr<ResolvedMachine> Resolve(const MachineRequest& request, std::string_view field) const;

  // nullptr when unknown. Names are exact.
  const MachineType* FindMachine(std::string_view name) const;
  const AcceleratorType* FindAccelerator(std::string_view name) const;

  // All names, in catalog order (families grouped, smallest first); GPUs only for accelerators.
  std::vector<std::string> MachineNames() const;
  std::vector<std::string> AcceleratorNames() const;
  // google.cloud.aiplatform.v1.AcceleratorType: every (name, number) of the catalog, TPUs
  // included, plus ACCELERATOR_TYPE_UNSPECIFIED = 0; what `$alt=json;enum-encoding=int` maps.
  std::vector<std::pair<std::string, int>> VertexAcceleratorEnum() const;

  // Every machine type in catalog order, priced with its bundled accelerators.
  std::vector<MachineListing> List() const;

 private:
  // The machine plus `accelerator_count` x `accelerator_type`; nullopt if a price is unknown.
  std::optional<double> HourlyUsd(const MachineType& machine, const std::string& accelerator_type,
                                  int accelerator_count) const;
  Status ResolveAccelerators(const MachineType& machine, const MachineRequest& request,
                             const std::string& field, ResolvedMachine* out) const;

  std::vector<MachineType> machines_;
  std::vector<AcceleratorType> accelerators_;
};

}  // namespace trainyard::machines
