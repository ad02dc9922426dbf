// AdamW (decoupled weight decay, Loshchilov & Hutter) as HF/PyTorch fine-tuning uses it, plus
// the linear warmup/decay learning-rate schedule of transformers'
// get_linear_schedule_with_warmup.
//
// Parameters are registered by name; biases and LayerNorm weights get no weight decay (the HF
// recipe). The state (step count, first and second moments) is exposed by name so checkpoints
// store it as plain tensors and a resumed run continues bit-for-bit.
//
// For contiguous float32 CPU parameters the update is one fused, vectorised pass over memory
// (rows split over model::ComputePool) instead of the ~6 tensor ops of torch.optim.AdamW; the
// arithmetic is the same, element by element:
//   p *= 1 - lr*wd;  m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g*g;
//   p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
// Rows that never had a gradient (most of a word-embedding table) are shortcut, exactly: while a
// row's m, v and g are all +0.0, the update above leaves m = v = 0 and reduces to p *= 1 - lr*wd
// (the m / (...) term is +0 / (0 + eps) = +0), so such a row only gets its weight decay. The
// optimizer remembers which rows ever had a non-zero moment ("live" rows, rebuilt from the moments
// on LoadState) and checks the gradient row; the shortcut is only taken while eps > 0 and the
// step's constants are finite, i.e. exactly when it is provably identical to the full update.
//
// ZeroGrad after Step zeroes only the gradient rows Step saw non-zero (an embedding gradient
// touched by one batch is a few hundred of 30522 rows); if the gradient tensor was replaced or
// modified in place since Step (its version counter moved), or Step did not run, it zeroes all.
// A gradient whose every row Step saw non-zero (a dense layer's) is instead *released*: .grad
// becomes undefined, so the next backward hands autograd a fresh tensor that it adopts as .grad,
// with no zero fill before it and no read-add-write into it (for MiniLM ~43 MB each of memset and
// accumulation per step). Step treats a released gradient that backward did not produce again
// as the zeros it stands for, so the update is the same as with a zeroed tensor, bit for bit
// (+0 + g == g for every float g but -0, and a -0 gradient updates exactly as +0 does).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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
  // Zeroes gradients in place or releases them (above). Afterwards every defined .grad is all
  // +0.0, as with grad.zero_(), and Step reads an undefined released one as +0.0.
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
    // Row bookkeeping of the fused CPU path; the parameter is viewed as (rows, numel / rows).
    std::vector<uint8_t> live;   // rows whose m or v may be non-zero; empty = to rebuild
    std::vector<uint8_t> dirty;  // rows whose gradient was non-zero at the last Step
    bool dirty_known = false;    // dirty describes .grad as of grad_version
    bool released = false;       // ZeroGrad undefined .grad; Step reads it as zeros
    const void* grad_data = nullptr;
    int64_t grad_version = -1;
  };
  static bool FusedPath(const Slot& s, const torch::Tensor& grad);
  static void RebuildLiveRows(Slot& s);
  void FusedStep(Slot& s, const torch::Tensor& grad, double decay, double step_size,
                 double bc2_sqrt);
  AdamWOptions options_;
  std::vector<Slot> params_;
  int64_t step_ = 0;
};

// lr multiplier at optimizer step `step` (0-based): step/warmup while warming up, then linear
// decay to 0 at `total_steps` (transformers.get_linear_schedule_with_warmup).
double LinearWarmupDecay(int64_t step, int64_t warmup_steps, int64_t total_steps);

}  // namespace trainyard::train
