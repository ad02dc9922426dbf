#include "train/adamw.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/compute_pool.h"
#include "model/simd.h"

namespace trainyard::train {

struct AdamWConstants {
  float b1, b2, one_b1, one_b2;  // beta1, beta2, 1 - beta1, 1 - beta2
  float keep;                    // 1 - lr * weight_decay
  float step_size;               // lr / (1 - beta1^t)
  float bc2_sqrt;                // sqrt(1 - beta2^t)
  float eps;
};

namespace {

// The kernels below are this file's hot loops (src/train/CMakeLists.txt compiles it with
// trainyard_vector_kernels: vectorised, no FMA contraction, so all ISA variants round alike and
// exactly as the scalar formula). Bit tests use memcpy: float and uint32_t must not alias.

// Whether any element of g[0..n) has a bit set (is anything but +0.0).
TRAINYARD_MULTIVERSION
bool RowHasBits(const float* __restrict g, int64_t n) {
  uint32_t bits = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, g + i, sizeof(b));
    bits |= b;
  }
  return bits != 0;
}

TRAINYARD_MULTIVERSION
void ScaleRow(float* __restrict p, int64_t n, float keep) {
  for (int64_t i = 0; i < n; ++i) p[i] = p[i] * keep;
}

// The AdamW update of n elements, in torch.optim.AdamW's operation order; returns whether any
// gradient element has a bit set.
TRAINYARD_MULTIVERSION
bool UpdateRow(float* __restrict p, const float* __restrict g, float* __restrict m,
               float* __restrict v, int64_t n, AdamWConstants c) {
  uint32_t bits = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    uint32_t b;
    std::memcpy(&b, &gi, sizeof(b));
    bits |= b;
    const float mi = c.b1 * m[i] + c.one_b1 * gi;
    const float vi = c.b2 * v[i] + c.one_b2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i] * c.keep - c.step_size * mi / (std::sqrt(vi) / c.bc2_sqrt + c.eps);
  }
  return bits != 0;
}

}  // namespace

AdamW::AdamW(const std::vector<std::pair<std::string, torch::Tensor>>& params, AdamWOptions options)
    : options_(options) {
  torch::NoGradGuard no_grad;
  for (const auto& [name, p] : params) {
    if (!p.requires_grad()) continue;
    Slot slot;
    slot.name = name;
    slot.param = p;
    slot.exp_avg = torch::zeros_like(p, torch::MemoryFormat::Contiguous);
    slot.exp_avg_sq = torch::zeros_like(p, torch::MemoryFormat::Contiguous);
    slot.decay = DecaysByName(name);
    params_.push_back(std::move(slot));
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
    if (!g.defined()) continue;
    const bool rows_known = s.dirty_known && g.data_ptr() == s.grad_data &&
                            g._version() == s.grad_version && FusedPath(s, g);
    s.dirty_known = false;
    if (!rows_known) {
      g.zero_();
      std::fill(s.dirty.begin(), s.dirty.end(), 0);
      continue;
    }
    if (std::find(s.dirty.begin(), s.dirty.end(), uint8_t{0}) == s.dirty.end()) {
      // Every row was written: hand the buffer back (header: a released gradient).
      g = torch::Tensor();
      s.released = true;
      std::fill(s.dirty.begin(), s.dirty.end(), 0);
      continue;
    }
    const int64_t rows = static_cast<int64_t>(s.dirty.size()), cols = g.numel() / rows;
    float* data = g.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
      if (!s.dirty[r]) continue;
      std::memset(data + r * cols, 0, sizeof(float) * cols);
      s.dirty[r] = 0;
    }
  }
}

bool AdamW::FusedPath(const Slot& s, const torch::Tensor& grad) {
  return s.param.device().is_cpu() && s.param.scalar_type() == torch::kFloat &&
         s.param.is_contiguous() && grad.device().is_cpu() && grad.layout() == torch::kStrided &&
         grad.scalar_type() == torch::kFloat && grad.is_contiguous() &&
         grad.numel() == s.param.numel();
}

void AdamW::RebuildLiveRows(Slot& s) {
  const int64_t rows = s.param.dim() >= 2 ? s.param.size(0) : 1;
  const int64_t cols = rows > 0 ? s.param.numel() / rows : 0;
  s.live.assign(rows, 0);
  s.dirty.assign(rows, 0);
  // Bit patterns, not values: a stored -0.0 moment counts as live, so a shortcut row's moments
  // are all +0.0 bits, exactly what the full update would leave there.
  const uint32_t* m = static_cast<const uint32_t*>(s.exp_avg.data_ptr());
  const uint32_t* v = static_cast<const uint32_t*>(s.exp_avg_sq.data_ptr());
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t bits = 0;
    for (int64_t i = r * cols; i < (r + 1) * cols; ++i) bits |= m[i] | v[i];
    s.live[r] = bits != 0;
  }
}

void AdamW::FusedStep(Slot& s, const torch::Tensor& grad, double decay, double step_size,
                      double bc2_sqrt) {
  if (static_cast<int64_t>(s.live.size()) != (s.param.dim() >= 2 ? s.param.size(0) : 1)) {
    RebuildLiveRows(s);
  }
  const int64_t rows = static_cast<int64_t>(s.live.size());
  const int64_t cols = rows > 0 ? s.param.numel() / rows : 0;
  AdamWConstants c;
  c.b1 = static_cast<float>(options_.beta1);
  c.b2 = static_cast<float>(options_.beta2);
  c.one_b1 = static_cast<float>(1 - options_.beta1);
  c.one_b2 = static_cast<float>(1 - options_.beta2);
  c.keep = static_cast<float>(1 - decay);
  c.step_size = static_cast<float>(step_size);
  c.bc2_sqrt = static_cast<float>(bc2_sqrt);
  c.eps = static_cast<float>(options_.eps);
  // When a row with m = v = g = +0 provably ends with m = v = +0 and p = p * keep (header).
  const bool shortcut = c.eps > 0 && std::isfinite(c.eps) && c.bc2_sqrt > 0 &&
                        std::isfinite(c.bc2_sqrt) && std::isfinite(c.step_size) &&
                        std::isfinite(c.b1) && std::isfinite(c.b2) && std::isfinite(c.one_b1) &&
                        std::isfinite(c.one_b2);
  float* p = s.param.data_ptr<float>();
  const float* g = grad.data_ptr<float>();
  float* m = s.exp_avg.data_ptr<float>();
  float* v = s.exp_avg_sq.data_ptr<float>();
  uint8_t* live = s.live.data();
  uint8_t* dirty = s.dirty.data();
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, cols));
  model::ComputePool::Get().ParallelFor(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r * cols;
          if (shortcut && !live[r]) {
            if (!RowHasBits(g + o, cols)) {
              // p * 1.0f == p, so without decay there is nothing to write.
              if (c.keep != 1.0f) ScaleRow(p + o, cols, c.keep);
              dirty[r] = 0;
              continue;
            }
          }
          live[r] = 1;
          dirty[r] = UpdateRow(p + o, g + o, m + o, v + o, cols, c);
        }
      },
      grain);
  s.dirty_known = true;
  s.grad_data = grad.data_ptr();
  s.grad_version = grad._version();
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
    torch::Tensor grad = s.param.grad();
    if (!grad.defined()) {
      if (!s.released) continue;
      // Backward gave no gradient where ZeroGrad released one: the zeros it stood for.
      grad = s.param.mutable_grad() = torch::zeros_like(s.param, torch::MemoryFormat::Contiguous);
    }
    s.released = false;
    const double decay = s.decay ? lr * options_.weight_decay : 0.0;
    if (FusedPath(s, grad)) {
      FusedStep(s, grad, decay, step_size, bc2_sqrt);
    } else {
      s.live.clear();  // moments change outside the row bookkeeping: rebuild it if needed
      s.dirty_known = false;
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
    s.live.clear();  // rebuilt from the loaded moments at the next Step
    s.dirty_known = false;
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
