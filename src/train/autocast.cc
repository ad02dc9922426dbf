#include "train/autocast.h"

#include "model/torch_compat.h"

namespace trainyard::train {

Status CheckAutocastSupported(bool enabled, const torch::Device& device) {
  if (!enabled) return Status::Ok();
  if (!model::compat::kHasCudaBf16Autocast) {
    return InvalidArgumentError(
        std::string("--bf16 needs a CUDA LibTorch >= 2.0; this build uses LibTorch ") +
        model::compat::TorchVersion() + " (drop --bf16 to train in float32)");
  }
  if (!device.is_cuda()) {
    return InvalidArgumentError(
        "--bf16 needs a CUDA device; none is available (drop --bf16 on CPU)");
  }
  return Status::Ok();
}

AutocastScope::AutocastScope(bool enabled)
    : enabled_(enabled && model::compat::kHasCudaBf16Autocast) {
  if (enabled_) model::compat::SetCudaBf16Autocast(true);
}

AutocastScope::~AutocastScope() {
  if (enabled_) model::compat::SetCudaBf16Autocast(false);
}

}  // namespace trainyard::train
