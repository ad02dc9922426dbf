#include "executor/machine_catalog.h"

#include <algorithm>

namespace trainyard::executor {
namespace {

// Sizes are Compute Engine's published machine shapes (https://cloud.google.com/compute/docs/
// machine-resource, accelerator-optimized types in /compute/docs/accelerator-optimized-machines).
//
// Prices: approximate Vertex AI custom-training on-demand rates for us-central1, from
// https://cloud.google.com/vertex-ai/pricing#custom-trained_models (machine and accelerator
// tables; accelerators are billed per GPU on top of the machine). They are estimates for the
// "estimated cost" a job shows, not a bill. Two figures are pinned to the article the product was
// designed from (the Vertex article's "n1-standard-4 $0.24/h + NVIDIA T4 $0.40/h"), so the README's
// demo reproduces its cost; the n1 families are priced per vCPU from that anchor.
constexpr double kN1StandardPerVcpu = 0.06;  // n1-standard-4 = $0.24/h (article)
constexpr double kN1HighmemPerVcpu = 0.0747;
constexpr double kN1HighcpuPerVcpu = 0.0448;
constexpr double kE2StandardPerVcpu = 0.0385;
constexpr double kE2HighmemPerVcpu = 0.0519;
constexpr double kE2HighcpuPerVcpu = 0.0284;

void AddFamily(std::vector<MachineType>& out, const std::string& family, std::vector<int> sizes,
               double gib_per_vcpu, double usd_per_vcpu) {
  for (int n : sizes) {
    out.push_back({family + "-" + std::to_string(n), n, gib_per_vcpu * n, usd_per_vcpu * n, "", 0});
  }
}

std::vector<MachineType> BuiltInMachines() {
  std::vector<MachineType> m;
  AddFamily(m, "n1-standard", {1, 2, 4, 8, 16, 32, 64, 96}, 3.75, kN1StandardPerVcpu);
  AddFamily(m, "n1-highmem", {2, 4, 8, 16, 32, 64, 96}, 6.5, kN1HighmemPerVcpu);
  AddFamily(m, "n1-highcpu", {2, 4, 8, 16, 32, 64, 96}, 0.9, kN1HighcpuPerVcpu);
  AddFamily(m, "e2-standard", {2, 4, 8, 16, 32}, 4.0, kE2StandardPerVcpu);
  AddFamily(m, "e2-highmem", {2, 4, 8, 16}, 8.0, kE2HighmemPerVcpu);
  AddFamily(m, "e2-highcpu", {2, 4, 8, 16, 32}, 1.0, kE2HighcpuPerVcpu);
  // A2 Standard: NVIDIA A100 40GB.
  m.push_back({"a2-highgpu-1g", 12, 85, 0.8711, "NVIDIA_TESLA_A100", 1});
  m.push_back({"a2-highgpu-2g", 24, 170, 1.7422, "NVIDIA_TESLA_A100", 2});
  m.push_back({"a2-highgpu-4g", 48, 340, 3.4844, "NVIDIA_TESLA_A100", 4});
  m.push_back({"a2-highgpu-8g", 96, 680, 6.9688, "NVIDIA_TESLA_A100", 8});
  m.push_back({"a2-megagpu-16g", 96, 1360, 9.9629, "NVIDIA_TESLA_A100", 16});
  // A2 Ultra: NVIDIA A100 80GB.
  m.push_back({"a2-ultragpu-1g", 12, 170, 1.2434, "NVIDIA_A100_80GB", 1});
  m.push_back({"a2-ultragpu-2g", 24, 340, 2.4868, "NVIDIA_A100_80GB", 2});
  m.push_back({"a2-ultragpu-4g", 48, 680, 4.9736, "NVIDIA_A100_80GB", 4});
  m.push_back({"a2-ultragpu-8g", 96, 1360, 9.9472, "NVIDIA_A100_80GB", 8});
  // A3: NVIDIA H100 80GB (High) / H100 Mega / H200 (Ultra).
  m.push_back({"a3-highgpu-1g", 26, 234, 1.2063, "NVIDIA_H100_80GB", 1});
  m.push_back({"a3-highgpu-2g", 52, 468, 2.4126, "NVIDIA_H100_80GB", 2});
  m.push_back({"a3-highgpu-4g", 104, 936, 4.8252, "NVIDIA_H100_80GB", 4});
  m.push_back({"a3-highgpu-8g", 208, 1872, 9.6504, "NVIDIA_H100_80GB", 8});
  m.push_back({"a3-megagpu-8g", 208, 1872, 10.0368, "NVIDIA_H100_MEGA_80GB", 8});
  m.push_back({"a3-ultragpu-8g", 224, 2952, 11.5400, "NVIDIA_H200_141GB", 8});
  // G2: NVIDIA L4.
  m.push_back({"g2-standard-4", 4, 16, 0.2338, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-8", 8, 32, 0.3250, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-12", 12, 48, 0.4162, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-16", 16, 64, 0.5074, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-24", 24, 96, 0.8324, "NVIDIA_L4", 2});
  m.push_back({"g2-standard-32", 32, 128, 0.8898, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-48", 48, 192, 1.6648, "NVIDIA_L4", 4});
  m.push_back({"g2-standard-96", 96, 384, 3.3296, "NVIDIA_L4", 8});
  return m;
}

std::vector<AcceleratorType> BuiltInAccelerators() {
  return {
      {"NVIDIA_TESLA_T4", 16, 0.40},  // article: $0.40/h
      {"NVIDIA_TESLA_P4", 8, 0.69},
      {"NVIDIA_TESLA_P100", 16, 1.679},
      {"NVIDIA_TESLA_V100", 16, 2.852},
      {"NVIDIA_TESLA_K80", 12, 0.5175},
      {"NVIDIA_TESLA_A100", 40, 3.3741},
      {"NVIDIA_A100_80GB", 80, 4.5148},
      {"NVIDIA_L4", 24, 0.6441},
      {"NVIDIA_H100_80GB", 80, 11.2660},
      {"NVIDIA_H100_MEGA_80GB", 80, 11.8034},
      {"NVIDIA_H200_141GB", 141, 12.5656},
  };
}

template <typename T>
std::string JoinNames(const std::vector<T>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item.name;
  }
  return out;
}

}  // namespace

const MachineCatalog& MachineCatalog::Default() {
  static const MachineCatalog* catalog =
      new MachineCatalog(BuiltInMachines(), BuiltInAccelerators());
  return *catalog;
}

MachineCatalog::MachineCatalog(std::vector<MachineType> machines,
                               std::vector<AcceleratorType> accelerators)
    : machines_(std::move(machines)), accelerators_(std::move(accelerators)) {}

const MachineType* MachineCatalog::FindMachine(std::string_view name) const {
  auto it = std::find_if(machines_.begin(), machines_.end(),
                         [&](const MachineType& m) { return m.name == name; });
  return it == machines_.end() ? nullptr : &*it;
}

const AcceleratorType* MachineCatalog::FindAccelerator(std::string_view name) const {
  auto it = std::find_if(accelerators_.begin(), accelerators_.end(),
                         [&](const AcceleratorType& a) { return a.name == name; });
  return it == accelerators_.end() ? nullptr : &*it;
}

std::vector<std::string> MachineCatalog::MachineNames() const {
  std::vector<std::string> out;
  for (const auto& m : machines_) out.push_back(m.name);
  return out;
}

std::vector<std::string> MachineCatalog::AcceleratorNames() const {
  std::vector<std::string> out;
  for (const auto& a : accelerators_) out.push_back(a.name);
  return out;
}

StatusOr<double> MachineCatalog::HourlyUsd(std::string_view machine_type,
                                           std::string_view accelerator_type,
                                           int accelerator_count) const {
  const MachineType* machine = FindMachine(machine_type);
  if (machine == nullptr) {
    return InvalidArgumentError("unknown machine type '" + std::string(machine_type) +
                                "'; known types: " + JoinNames(machines_));
  }
  if (accelerator_count < 0) {
    return InvalidArgumentError("accelerator count must be >= 0, got " +
                                std::to_string(accelerator_count));
  }
  std::string_view accel_name = accelerator_type;
  int count = accelerator_count;
  if (accel_name.empty() && count == 0 && machine->bundled_accelerator_count > 0) {
    accel_name = machine->bundled_accelerator;
    count = machine->bundled_accelerator_count;
  }
  double usd = machine->usd_per_hour;
  if (!accel_name.empty()) {
    const AcceleratorType* accel = FindAccelerator(accel_name);
    if (accel == nullptr) {
      return InvalidArgumentError("unknown accelerator type '" + std::string(accel_name) +
                                  "'; known types: " + JoinNames(accelerators_));
    }
    usd += accel->usd_per_hour * count;
  }
  return usd;
}

}  // namespace trainyard::executor
