#include "train/autocast.h"

#include <fstream>

#include "model/torch_compat.h"

namespace trainyard::train {

Status CheckAutocastSupported(bool enabled, const torch::Device& device) {
  if (!enabled || device.is_cpu()) return Status::Ok();
  if (!device.is_cuda()) {
    return InvalidArgumentError("--bf16 runs on CPU or CUDA, not on " + device.str() +
                                " (drop --bf16)");
  }
  if (!model::compat::kHasCudaBf16Autocast) {
    return InvalidArgumentError(
        std::string("--bf16 on CUDA needs LibTorch >= 2.0; this build uses LibTorch ") +
        model::compat::TorchVersion() + " (drop --bf16 to train in float32)");
  }
  return Status::Ok();
}

std::string CpuBf16Unit() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    line += ' ';
    if (line.find(" amx_bf16 ") != std::string::npos) return "AMX";
    if (line.find(" avx512_bf16 ") != std::string::npos) return "AVX512-BF16";
    return "";
  }
  return "";
}

AutocastScope::AutocastScope(bool enabled, const torch::Device& device)
    : cuda_(enabled && device.is_cuda() && model::compat::kHasCudaBf16Autocast),
      cpu_(enabled && device.is_cpu()) {
  if (cuda_) model::compat::SetCudaBf16Autocast(true);
  if (cpu_) model::compat::SetCpuBf16Autocast(true);
}

AutocastScope::~AutocastScope() {
  if (cuda_) model::compat::SetCudaBf16Autocast(false);
  if (cpu_) model::compat::SetCpuBf16Autocast(false);
}

}  // namespace trainyard::train
