// bf16 autocast on CUDA behind one small guard (the version differences of the autocast API
// live in model/torch_compat.h): LibTorch 1.13 (Debian 12, CPU) has no usable bf16 CUDA path.
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
