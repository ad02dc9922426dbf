// Which physical GPUs serve a Vertex acceleratorType (the types of machine_catalog.h; a test keeps
// the two in step): the mapping from MachineSpec's enum names
// (NVIDIA_TESLA_T4, NVIDIA_A100_80GB, ...) to the product names nvidia-smi prints
// (--query-gpu=name), e.g.
//   NVIDIA_TESLA_T4        "Tesla T4"
//   NVIDIA_TESLA_V100      "Tesla V100-SXM2-16GB", "Tesla V100-PCIE-32GB"
//   NVIDIA_TESLA_A100      "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"
//   NVIDIA_A100_80GB       "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"
//   NVIDIA_L4              "NVIDIA L4"
//   NVIDIA_H100_80GB,      "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"
//   NVIDIA_H100_MEGA_80GB
//   NVIDIA_H200_141GB      "NVIDIA H200", "NVIDIA H200 NVL"
// (also P4, P100, K80). Names are compared case-insensitively after dropping a leading
// "NVIDIA " and "Tesla " (drivers differ in whether they print them).
//
// Escape hatch for inventories configured by hand: a device named kAnyGpuModel ("configured
// GPU", what `trainyard server --gpus N` adds when nvidia-smi shows fewer than N GPUs) serves
// every type; LocalExecutorOptions::any_gpu_model (`--any-gpu-model`) makes every GPU do so.
#pragma once

#include <string>
#include <string_view>

namespace trainyard::machines {

inline constexpr std::string_view kAnyGpuModel = "configured GPU";

// True when a device named `device_name` is a model of `accelerator_type`. Unknown accelerator
// types match nothing (except kAnyGpuModel devices).
bool GpuServes(std::string_view accelerator_type, std::string_view device_name);

// The accelerator type a device is ("Tesla T4" -> "NVIDIA_TESLA_T4"), "" if it is none Vertex
// has (e.g. "NVIDIA GeForce RTX 4090"). For H100s: NVIDIA_H100_80GB.
std::string AcceleratorTypeOf(std::string_view device_name);

}  // namespace trainyard::machines
