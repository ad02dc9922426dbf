#include "model/embedding_lookup.h"

#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace trainyard::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The dense gradient's rows for the distinct ids, as a coalesced sparse (V, D) tensor. Each row
// is 0 + g[i1] + g[i2] + ... over the tokens using it in token order, the order and starting
// value of at::embedding_dense_backward on CPU, so the sum has the same bits.
template <typename scalar_t>
torch::Tensor CoalescedRows(const torch::Tensor& grad, const torch::Tensor& ids, int64_t num_rows,
                            int64_t padding_idx) {
  const int64_t D = grad.size(-1);
  const torch::Tensor g = grad.reshape({-1, D}).contiguous();                // (N, D)
  const torch::Tensor id = ids.reshape({-1}).to(torch::kLong).contiguous();  // (N)
  const int64_t N = id.numel();
  const int64_t* id_data = id.data_ptr<int64_t>();
  std::vector<int64_t> order;
  order.reserve(N);
  for (int64_t i = 0; i < N; ++i) {
    if (id_data[i] != padding_idx) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return id_data[a] < id_data[b]; });
  int64_t unique = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || id_data[order[k]] != id_data[order[k - 1]]) ++unique;
  }
  torch::Tensor indices = torch::empty({1, unique}, id.options());  // (1, U)
  torch::Tensor values = torch::zeros({unique, D}, g.options());    // (U, D)
  int64_t* out_ids = indices.data_ptr<int64_t>();
  scalar_t* out = values.data_ptr<scalar_t>();
  const scalar_t* in = g.data_ptr<scalar_t>();
  int64_t u = -1;
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t i = order[k];
    if (k == 0 || id_data[i] != id_data[order[k - 1]]) out_ids[++u] = id_data[i];
    scalar_t* row = out + u * D;
    const scalar_t* src = in + i * D;
    for (int64_t d = 0; d < D; ++d) row[d] += src[d];
  }
  torch::Tensor sparse = at::_sparse_coo_tensor_unsafe(indices, values, {num_rows, D},
                                                       values.options().layout(torch::kSparse));
  sparse._coalesced_(true);  // ids are unique and sorted
  return sparse;
}

class EmbeddingLookupFunction : public torch::autograd::Function<EmbeddingLookupFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& weight,
                               const torch::Tensor& ids, int64_t padding_idx) {
    // The weight itself (not a saved copy) so backward can see whether .grad already exists.
    ctx->saved_data["weight"] = weight;
    ctx->saved_data["ids"] = ids;
    ctx->saved_data["padding_idx"] = padding_idx;
    return at::embedding(weight, ids, padding_idx);  // (*ids.shape, D)
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const torch::Tensor weight = ctx->saved_data["weight"].toTensor();
    const torch::Tensor ids = ctx->saved_data["ids"].toTensor();
    const int64_t padding_idx = ctx->saved_data["padding_idx"].toInt();
    const torch::Tensor& grad = grads[0];
    const torch::Tensor& existing = weight.grad();
    const bool in_place =
        existing.defined() && existing.layout() == torch::kStrided && existing.device().is_cpu() &&
        grad.device().is_cpu() && existing.scalar_type() == grad.scalar_type() &&
        (grad.scalar_type() == torch::kFloat || grad.scalar_type() == torch::kDouble);
    torch::Tensor out;
    if (!in_place) {
      out = at::embedding_dense_backward(grad, ids, weight.size(0), padding_idx,
                                         /*scale_grad_by_freq=*/false);  // (V, D)
    } else if (grad.scalar_type() == torch::kFloat) {
      out = CoalescedRows<float>(grad, ids, weight.size(0), padding_idx);  // sparse (V, D)
    } else {
      out = CoalescedRows<double>(grad, ids, weight.size(0), padding_idx);  // sparse (V, D)
    }
    return {out, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor EmbeddingLookup(const torch::Tensor& weight, const torch::Tensor& ids,
                              int64_t padding_idx) {
  if (!weight.requires_grad() || !torch::GradMode::is_enabled()) {
    return at::embedding(weight, ids, padding_idx);
  }
  return EmbeddingLookupFunction::apply(weight, ids, padding_idx);
}

}  // namespace trainyard::model
