#include "train/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace trainyard::train {

#if TORCH_VERSION_MAJOR >= 2
constexpr bool kHasBf16Autocast = true;
#else
constexpr bool kHasBf16Autocast = false;
#endif

Status CheckAutocastSupported(bool enabled, const torch::Device& device) {
  if (!enabled) return Status::Ok();
  if (!kHasBf16Autocast) {
    return InvalidArgumentError(
        std::string("--bf16 needs a CUDA LibTorch >= 2.0; this build uses LibTorch ") +
        TORCH_VERSION + " (drop --bf16 to train in float32)");
  }
  if (!device.is_cuda()) {
    return InvalidArgumentError(
        "--bf16 needs a CUDA device; none is available (drop --bf16 on CPU)");
  }
  return Status::Ok();
}

AutocastScope::AutocastScope(bool enabled) : enabled_(enabled && kHasBf16Autocast) {
  if (!enabled_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCUDA, true);
#elif TORCH_VERSION_MAJOR == 2
  at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  at::autocast::set_enabled(true);
#endif
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_enabled(at::kCUDA, false);
  at::autocast::clear_cache();
#elif TORCH_VERSION_MAJOR == 2
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
#endif
}

}  // namespace trainyard::train
