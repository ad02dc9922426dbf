// bf16 autocast on CUDA behind one small guard, because the autocast API differs between
// LibTorch versions: 1.13 (Debian, CPU) has no usable bf16 CUDA path here, 2.0-2.3 use
// set_enabled/set_autocast_gpu_dtype, 2.4+ use the device-typed set_autocast_enabled/_dtype.
#pragma once

#include <torch/torch.h>

#include "common/status.h"

namespace trainyard::train {

// OK when `enabled` is false, or when this build is LibTorch >= 2 and `device` is CUDA;
// otherwise INVALID_ARGUMENT explaining that --bf16 needs a CUDA LibTorch >= 2.0.
Status CheckAutocastSupported(bool enabled, const torch::Device& device);

// While alive (and enabled), CUDA ops run under bf16 autocast. Precondition:
// CheckAutocastSupported(enabled, device) was OK.
class AutocastScope {
 public:
  explicit AutocastScope(bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
};

}  // namespace trainyard::train
