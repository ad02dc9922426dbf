// MachineCatalog: the Vertex AI / Compute Engine machine and accelerator types a job spec may name,
// with their size and an on-demand hourly price, so the executor can turn a MachineSpec into CPU,
// memory and GPU demand and the API can show each job's estimated cost.
//
// Prices are estimates in USD per hour (us-central1, on-demand, Vertex AI custom training); see
// machine_catalog.cc for the source. Machine prices exclude accelerators, which Vertex bills
// separately per GPU (also for a2/a3/g2 types that come with their GPUs).
//
// Thread-safety: the catalog is immutable; every method is safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::executor {

struct MachineType {
  std::string name;  // "n1-standard-4"
  int vcpus = 0;
  double memory_gib = 0;
  double usd_per_hour = 0;  // the machine alone, without accelerators
  // Accelerator-optimized types (a2-*, a3-*, g2-*) come with a fixed number of GPUs of one type;
  // empty / 0 for general-purpose types, which take any acceleratorType the spec names.
  std::string bundled_accelerator;
  int bundled_accelerator_count = 0;
};

struct AcceleratorType {
  std::string name;  // "NVIDIA_TESLA_T4" (the MachineSpec.acceleratorType enum name)
  double memory_gib = 0;
  double usd_per_hour = 0;  // per accelerator
};

class MachineCatalog {
 public:
  // The built-in catalog (process-wide, immutable).
  static const MachineCatalog& Default();

  MachineCatalog(std::vector<MachineType> machines, std::vector<AcceleratorType> accelerators);

  // nullptr when unknown. Names are exact (case-sensitive, as in the Vertex API).
  const MachineType* FindMachine(std::string_view name) const;
  const AcceleratorType* FindAccelerator(std::string_view name) const;

  // All names, in catalog order (families grouped, smallest first).
  std::vector<std::string> MachineNames() const;
  std::vector<std::string> AcceleratorNames() const;

  // Hourly USD for one replica: the machine plus accelerator_count x the accelerator.
  // INVALID_ARGUMENT for an unknown machine or accelerator name (message lists valid names) or a
  // negative count. An empty accelerator_type with count 0 means "no accelerator"; for machine
  // types with bundled GPUs and count 0 the bundled GPUs are priced.
  StatusOr<double> HourlyUsd(std::string_view machine_type, std::string_view accelerator_type,
                             int accelerator_count) const;

 private:
  std::vector<MachineType> machines_;
  std::vector<AcceleratorType> accelerators_;
};

}  // namespace trainyard::executor
