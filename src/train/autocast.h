// bf16 autocast behind one small guard (the version differences of the autocast API live in
// model/torch_compat.h): on CUDA with LibTorch >= 2.0 (1.13, Debian 12's, has no usable bf16 CUDA
// path), and on CPU with any supported LibTorch, where ATen runs the GEMMs in bf16 through oneDNN
// (AMX tiles or AVX512-BF16 where the CPU has them). Weights, gradients, optimizer state and the
// loss stay float32; only the autocast region's matrix products (and what follows them up to the
// next float32 op) are bf16, so results differ from float32 training by bf16 rounding.
#pragma once

#include <torch/torch.h>

#include <string>

#include "common/status.h"

namespace trainyard::train {

// OK when `enabled` is false, when `device` is a CPU, or when this build is LibTorch >= 2 and
// `device` is CUDA; otherwise INVALID_ARGUMENT explaining that --bf16 on CUDA needs LibTorch >= 2.
Status CheckAutocastSupported(bool enabled, const torch::Device& device);

// What runs bf16 matrix products on this CPU, for the log: "AMX", "AVX512-BF16", or "" when the
// CPU has neither (bf16 is then converted in software and slower than float32). From the kernel's
// CPU flags (/proc/cpuinfo), which list AMX only when the kernel lets processes use it.
std::string CpuBf16Unit();

// While alive (and enabled), ops on `device`'s type run under bf16 autocast. Precondition:
// CheckAutocastSupported(enabled, device) was OK.
class AutocastScope {
 public:
  AutocastScope(bool enabled, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool cuda_ = false, cpu_ = false;
};

}  // namespace trainyard::train
