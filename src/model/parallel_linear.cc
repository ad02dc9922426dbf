#include "model/parallel_linear.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <functional>

#include "model/compute_pool.h"
#include "model/torch_compat.h"

namespace trainyard::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// fn(begin, end) over [0, rows) in one contiguous block per pool thread.
void ForRowBlocks(int64_t rows, const std::function<void(int64_t, int64_t)>& fn) {
  ComputePool::Get().ParallelFor(rows, fn);
}

class ParallelLinearFunction : public torch::autograd::Function<ParallelLinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& b) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["has_bias"] = b.defined();
    const int64_t N = x.size(0), M = w.size(0);
    torch::Tensor y = at::empty({N, M}, x.options());  // (N, M)
    const torch::Tensor wt = w.t();                    // (K, M)
    ForRowBlocks(N, [&](int64_t begin, int64_t end) {
      torch::Tensor y_rows = y.narrow(0, begin, end - begin);
      const torch::Tensor x_rows = x.narrow(0, begin, end - begin);
      if (b.defined()) {
        at::addmm_out(y_rows, b, x_rows, wt);  // what at::linear runs: b + x w^T
      } else {
        at::mm_out(y_rows, x_rows, wt);
      }
    });
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];               // (N, K)
    const torch::Tensor& w = saved[1];               // (M, K)
    const torch::Tensor dy = grads[0].contiguous();  // (N, M)
    torch::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) {
      dx = at::empty(x.sizes(), x.options());  // (N, K) = dy w
      ForRowBlocks(x.size(0), [&](int64_t begin, int64_t end) {
        torch::Tensor dx_rows = dx.narrow(0, begin, end - begin);
        at::mm_out(dx_rows, dy.narrow(0, begin, end - begin), w);
      });
    }
    if (ctx->needs_input_grad(1)) {
      dw = at::empty(w.sizes(), w.options());  // (M, K) = dy^T x, by rows of w
      ForRowBlocks(w.size(0), [&](int64_t begin, int64_t end) {
        torch::Tensor dw_rows = dw.narrow(0, begin, end - begin);
        at::mm_out(dw_rows, dy.narrow(1, begin, end - begin).t(), x);
      });
    }
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) db = dy.sum(0);  // (M)
    return {dx, dw, db};
  }
};

}  // namespace

torch::Tensor ParallelLinear(const torch::Tensor& x, const torch::Tensor& w,
                             const torch::Tensor& b) {
  const int threads = ComputePool::Get().threads();
  const bool use =
      threads > 1 && !at::in_parallel_region() && x.dim() == 2 && x.size(0) >= 32 * threads &&
      x.device().is_cpu() && x.scalar_type() == torch::kFloat && w.scalar_type() == torch::kFloat &&
      (!b.defined() || b.scalar_type() == torch::kFloat) && !compat::CpuAutocastEnabled();
  if (!use) return at::linear(x, w, b);
  return ParallelLinearFunction::apply(x.contiguous(), w, b);
}

}  // namespace trainyard::model
