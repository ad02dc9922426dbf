// AdamW (decoupled weight decay, Loshchilov & Hutter) as HF/PyTorch fine-tuning uses it, plus
// the linear warmup/decay learning-rate schedule of transformers'
// get_linear_schedule_with_warmup.
//
// Parameters are registered by name; biases and LayerNorm weights get no weight decay (the HF
// recipe). The state (step count, first and second moments) is exposed by name so checkpoints
// store it as plain tensors and a resumed run continues bit-for-bit.
//
// For contiguous float32 CPU parameters the update is one fused pass over memory (at::parallel_for)
// instead of the ~6 tensor ops of torch.optim.AdamW; the arithmetic is the same:
//   p *= 1 - lr*wd;  m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g*g;
//   p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/status.h"

namespace trainyard::train {

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

class AdamW {
 public:
  // `params`: (name, parameter) pairs; parameters with requires_grad() == false are skipped.
  AdamW(const std::vector<std::pair<std::string, torch::Tensor>>& params, AdamWOptions options);

  // HF's rule: no decay for biases and LayerNorm weights.
  static bool DecaysByName(const std::string& name);

  // One update with learning rate `lr`. Parameters without a gradient are left alone.
  void Step(double lr);
  // Zeroes gradients in place (keeps their memory: no allocation per step).
  void ZeroGrad();

  int64_t step_count() const { return step_; }
  size_t num_trainable() const { return params_.size(); }
  int64_t num_trainable_elements() const;

  // "<name>.exp_avg", "<name>.exp_avg_sq" (CPU copies) for every trainable parameter.
  std::map<std::string, torch::Tensor> StateTensors() const;
  // Restores the state written by StateTensors; FAILED_PRECONDITION naming the tensor when a name
  // is missing or a shape differs (a checkpoint of a different model or trainable-layer set).
  Status LoadState(const std::map<std::string, torch::Tensor>& tensors, int64_t step);

 private:
  struct Slot {
    std::string name;
    torch::Tensor param, exp_avg, exp_avg_sq;
    bool decay;
  };
  AdamWOptions options_;
  std::vector<Slot> params_;
  int64_t step_ = 0;
};

// lr multiplier at optimizer step `step` (0-based): step/warmup while warming up, then linear
// decay to 0 at `total_steps` (transformers.get_linear_schedule_with_warmup).
double LinearWarmupDecay(int64_t step, int64_t warmup_steps, int64_t total_steps);

}  // namespace trainyard::train
