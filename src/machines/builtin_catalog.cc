// The built-in catalog's data: MachineCatalog::Default().
//
// Sizes are Compute Engine's published machine shapes (https://cloud.google.com/compute/docs/
// machine-resource; accelerator-optimized types and the GPUs each comes with in
// /compute/docs/accelerator-optimized-machines and /compute/docs/gpus).
//
// Prices: approximate Vertex AI custom-training on-demand rates for us-central1, from
// https://cloud.google.com/vertex-ai/pricing#custom-trained_models (machine and accelerator
// tables; accelerators are billed per GPU on top of the machine). They are estimates for the
// "estimated cost" a job shows, not a bill. Two figures are pinned to the article the product was
// designed from (the Vertex article's "n1-standard-4 $0.24/h + NVIDIA T4 $0.40/h"), so the README's
// demo reproduces its cost; the n1 families are priced per vCPU from that anchor. n2 and c2 are
// Compute Engine's per-vCPU + per-GB rates of their shape plus Vertex's ~15% training markup.
#include "machines/machine_catalog.h"

namespace trainyard::machines {
namespace {

constexpr double kN1StandardPerVcpu = 0.06;  // n1-standard-4 = $0.24/h (article)
constexpr double kN1HighmemPerVcpu = 0.0747;
constexpr double kN1HighcpuPerVcpu = 0.0448;
constexpr double kN2StandardPerVcpu = 0.05585;
constexpr double kN2HighmemPerVcpu = 0.07533;
constexpr double kN2HighcpuPerVcpu = 0.04123;
constexpr double kE2StandardPerVcpu = 0.0385;
constexpr double kE2HighmemPerVcpu = 0.0519;
constexpr double kE2HighcpuPerVcpu = 0.0284;
constexpr double kC2StandardPerVcpu = 0.06001;

void AddFamily(std::vector<MachineType>& out, const std::string& family, std::vector<int> sizes,
               double gib_per_vcpu, double usd_per_vcpu) {
  for (int n : sizes) {
    out.push_back({family + "-" + std::to_string(n), n, gib_per_vcpu * n, usd_per_vcpu * n, "", 0});
  }
}

std::vector<MachineType> GeneralPurposeMachines() {
  std::vector<MachineType> m;
  AddFamily(m, "n1-standard", {1, 2, 4, 8, 16, 32, 64, 96}, 3.75, kN1StandardPerVcpu);
  AddFamily(m, "n1-highmem", {2, 4, 8, 16, 32, 64, 96}, 6.5, kN1HighmemPerVcpu);
  AddFamily(m, "n1-highcpu", {2, 4, 8, 16, 32, 64, 96}, 0.9, kN1HighcpuPerVcpu);
  AddFamily(m, "n2-standard", {2, 4, 8, 16, 32, 48, 64, 80, 96, 128}, 4.0, kN2StandardPerVcpu);
  AddFamily(m, "n2-highmem", {2, 4, 8, 16, 32, 48, 64, 80, 96, 128}, 8.0, kN2HighmemPerVcpu);
  AddFamily(m, "n2-highcpu", {2, 4, 8, 16, 32, 48, 64, 80, 96}, 1.0, kN2HighcpuPerVcpu);
  AddFamily(m, "e2-standard", {2, 4, 8, 16, 32}, 4.0, kE2StandardPerVcpu);
  AddFamily(m, "e2-highmem", {2, 4, 8, 16}, 8.0, kE2HighmemPerVcpu);
  AddFamily(m, "e2-highcpu", {2, 4, 8, 16, 32}, 1.0, kE2HighcpuPerVcpu);
  AddFamily(m, "c2-standard", {4, 8, 16, 30, 60}, 4.0, kC2StandardPerVcpu);
  return m;
}

// Accelerator-optimized types: each comes with a fixed number of GPUs of one type.
void AddAcceleratorOptimized(std::vector<MachineType>& m) {
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
  // A4: NVIDIA B200; A4X: NVIDIA GB200 (Grace ARM hosts: images must be built for arm64). Vertex
  // trains on both, but this catalog has no source for their rates: no price, so jobs on them
  // show no cost estimate rather than a guessed one.
  m.push_back({"a4-highgpu-8g", 224, 3968, std::nullopt, "NVIDIA_B200", 8});
  m.push_back({"a4x-highgpu-4g", 140, 884, std::nullopt, "NVIDIA_GB200", 4});
  // G2: NVIDIA L4 (1 GPU up to g2-standard-16 and for -32; 2, 4, 8 for -24, -48, -96).
  m.push_back({"g2-standard-4", 4, 16, 0.2338, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-8", 8, 32, 0.3250, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-12", 12, 48, 0.4162, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-16", 16, 64, 0.5074, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-24", 24, 96, 0.8324, "NVIDIA_L4", 2});
  m.push_back({"g2-standard-32", 32, 128, 0.8898, "NVIDIA_L4", 1});
  m.push_back({"g2-standard-48", 48, 192, 1.6648, "NVIDIA_L4", 4});
  m.push_back({"g2-standard-96", 96, 384, 3.3296, "NVIDIA_L4", 8});
}

// google/cloud/aiplatform/v1/accelerator_type.proto: names, numbers; per-GPU memory and price.
std::vector<AcceleratorType> BuiltInAccelerators() {
  return {
      {"NVIDIA_TESLA_T4", 5, 16, 0.40},  // article: $0.40/h
      {"NVIDIA_TESLA_P4", 4, 8, 0.69},
      {"NVIDIA_TESLA_P100", 2, 16, 1.679},
      {"NVIDIA_TESLA_V100", 3, 16, 2.852},
      {"NVIDIA_TESLA_K80", 1, 12, 0.5175},
      {"NVIDIA_TESLA_A100", 8, 40, 3.3741},
      {"NVIDIA_A100_80GB", 9, 80, 4.5148},
      {"NVIDIA_L4", 11, 24, 0.6441},
      {"NVIDIA_H100_80GB", 13, 80, 11.2660},
      {"NVIDIA_H100_MEGA_80GB", 14, 80, 11.8034},
      {"NVIDIA_H200_141GB", 15, 141, 12.5656},
      {"NVIDIA_B200", 16, 180, std::nullopt},
      {"NVIDIA_GB200", 17, 186, std::nullopt},
      {"TPU_V2", 6, 0, std::nullopt, /*tpu=*/true},
      {"TPU_V3", 7, 0, std::nullopt, /*tpu=*/true},
      {"TPU_V4_POD", 10, 0, std::nullopt, /*tpu=*/true},
      {"TPU_V5_LITEPOD", 12, 0, std::nullopt, /*tpu=*/true},
  };
}

}  // namespace

const MachineCatalog& MachineCatalog::Default() {
  static const MachineCatalog* catalog = [] {
    std::vector<MachineType> machines = GeneralPurposeMachines();
    AddAcceleratorOptimized(machines);
    return new MachineCatalog(std::move(machines), BuiltInAccelerators());
  }();
  return *catalog;
}

}  // namespace trainyard::machines
