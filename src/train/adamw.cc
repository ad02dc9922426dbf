#include "train/adamw.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace trainyard::train {

AdamW::AdamW(const std::vector<std::pair<std::string, torch::Tensor>>& params,
             AdamWOptions options)
    : options_(options) {
  torch::NoGradGuard no_grad;
  for (const auto& [name, p] : params) {
    if (!p.requires_grad()) continue;
    params_.push_back({name, p, torch::zeros_like(p, torch::MemoryFormat::Contiguous),
                       torch::zeros_like(p, torch::MemoryFormat::Contiguous),
                       DecaysByName(name)});
  }
}

bool AdamW::DecaysByName(const std::string& name) {
  const bool is_bias = name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
  return !is_bias && name.find("LayerNorm") == std::string::npos;
}

int64_t AdamW::num_trainable_elements() const {
  int64_t n = 0;
  for (const auto& s : params_) n += s.param.numel();
  return n;
}

void AdamW::ZeroGrad() {
  for (auto& s : params_) {
    auto& g = s.param.mutable_grad();
    if (g.defined()) g.zero_();
  }
}

void AdamW::Step(double lr) {
  torch::NoGradGuard no_grad;
  ++step_;
  const double b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
  const double bias_correction1 = 1 - std::pow(b1, static_cast<double>(step_));
  const double bias_correction2 = 1 - std::pow(b2, static_cast<double>(step_));
  const double step_size = lr / bias_correction1;
  const double bc2_sqrt = std::sqrt(bias_correction2);
  for (auto& s : params_) {
    const torch::Tensor& grad = s.param.grad();
    if (!grad.defined()) continue;
    const double decay = s.decay ? lr * options_.weight_decay : 0.0;
    const bool fused = s.param.device().is_cpu() && s.param.scalar_type() == torch::kFloat &&
                       s.param.is_contiguous() && grad.is_contiguous() &&
                       grad.scalar_type() == torch::kFloat;
    if (fused) {
      float* p = s.param.data_ptr<float>();
      const float* g = grad.data_ptr<float>();
      float* m = s.exp_avg.data_ptr<float>();
      float* v = s.exp_avg_sq.data_ptr<float>();
      const float fb1 = b1, fb2 = b2, one_b1 = 1 - b1, one_b2 = 1 - b2;
      const float keep = 1 - decay, fstep = step_size, fbc2 = bc2_sqrt, feps = eps;
      at::parallel_for(0, s.param.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const float gi = g[i];
          const float mi = fb1 * m[i] + one_b1 * gi;
          const float vi = fb2 * v[i] + one_b2 * gi * gi;
          m[i] = mi;
          v[i] = vi;
          p[i] = p[i] * keep - fstep * mi / (std::sqrt(vi) / fbc2 + feps);
        }
      });
    } else {
      if (decay != 0) s.param.mul_(1 - decay);
      s.exp_avg.mul_(b1).add_(grad, 1 - b1);
      s.exp_avg_sq.mul_(b2).addcmul_(grad, grad, 1 - b2);
      auto denom = (s.exp_avg_sq.sqrt() / bc2_sqrt).add_(eps);
      s.param.addcdiv_(s.exp_avg, denom, -step_size);
    }
  }
}

std::map<std::string, torch::Tensor> AdamW::StateTensors() const {
  std::map<std::string, torch::Tensor> out;
  for (const auto& s : params_) {
    out[s.name + ".exp_avg"] = s.exp_avg.to(torch::kCPU).clone();
    out[s.name + ".exp_avg_sq"] = s.exp_avg_sq.to(torch::kCPU).clone();
  }
  return out;
}

Status AdamW::LoadState(const std::map<std::string, torch::Tensor>& tensors, int64_t step) {
  torch::NoGradGuard no_grad;
  for (auto& s : params_) {
    const std::pair<const char*, torch::Tensor*> slots[] = {{".exp_avg", &s.exp_avg},
                                                            {".exp_avg_sq", &s.exp_avg_sq}};
    for (const auto& [suffix, dst] : slots) {
      auto it = tensors.find(s.name + suffix);
      if (it == tensors.end()) {
        return FailedPreconditionError("optimizer state has no '" + s.name + suffix +
                                       "' (the checkpoint trained a different set of parameters)");
      }
      if (!it->second.sizes().equals(dst->sizes())) {
        return FailedPreconditionError("optimizer state '" + s.name + suffix + "' has shape " +
                                       c10::str(it->second.sizes()) + ", the model needs " +
                                       c10::str(dst->sizes()));
      }
      dst->copy_(it->second);
    }
  }
  step_ = step;
  return Status::Ok();
}

double LinearWarmupDecay(int64_t step, int64_t warmup_steps, int64_t total_steps) {
  if (step < warmup_steps) {
    return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_steps));
  }
  return std::max(0.0, static_cast<double>(total_steps - step) /
                           static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps)));
}

}  // namespace trainyard::train
