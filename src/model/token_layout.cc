#include "model/token_layout.h"

namespace trainyard::model {

TokenLayout TokenLayout::FromMask(const torch::Tensor& input_ids,
                                  const torch::Tensor& attention_mask) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be (B, T), got ", input_ids.sizes());
  TokenLayout l;
  l.batch = input_ids.size(0);
  l.padded_length = input_ids.size(1);
  const int64_t B = l.batch, T_in = l.padded_length;
  const auto long_options = input_ids.options().dtype(torch::kLong);
  torch::Tensor keep = attention_mask.defined()
                           ? attention_mask.ne(0)
                           : torch::ones({B, T_in}, input_ids.options().dtype(torch::kBool));
  TORCH_CHECK(keep.sizes() == input_ids.sizes(), "attention_mask ", keep.sizes(),
              " does not match input_ids ", input_ids.sizes());
  torch::Tensor compute = keep.clone();  // (B, T_in)
  if (T_in > 0) compute.select(1, 0).fill_(true);
  int64_t T = T_in;
  if (B > 0 && T_in > 0) {
    T = compute.any(0).nonzero().max().item<int64_t>() + 1;  // last column any row computes
    compute = compute.narrow(1, 0, T);
  }
  l.length = T;
  l.keep = keep.narrow(1, 0, T);                               // (B, T)
  torch::Tensor counts = compute.sum(1, false, torch::kLong);  // (B)
  l.tokens = counts.sum().item<int64_t>();
  if (l.tokens == B * T) {
    l.first = torch::arange(B, long_options) * T;  // (B)
  } else {
    l.index = compute.reshape({B * T}).nonzero().squeeze(1);  // (N)
    l.first = counts.cumsum(0) - counts;                      // (B) exclusive prefix sums
  }
  return l;
}

torch::Tensor TokenLayout::Gather(const torch::Tensor& per_position) const {
  auto flat = per_position.narrow(1, 0, length).reshape({batch * length});  // (B * T)
  return dense() ? flat : flat.index_select(0, index);                      // (N)
}

torch::Tensor TokenLayout::Positions() const {
  auto options = keep.options().dtype(torch::kLong);
  if (dense()) return torch::arange(length, options).repeat({batch});  // (N)
  return index.remainder(length);                                      // (N)
}

torch::Tensor TokenLayout::Pad(const torch::Tensor& packed) const {
  const int64_t D = packed.size(1);
  if (dense()) return packed.view({batch, length, D});  // (B, T, D)
  return torch::zeros({batch * length, D}, packed.options())
      .index_copy(0, index, packed)
      .view({batch, length, D});  // (B, T, D)
}

torch::Tensor TokenLayout::Unpad(const torch::Tensor& padded) const {
  auto flat = padded.reshape({batch * length, padded.size(2)});  // (B * T, D)
  return dense() ? flat : flat.index_select(0, index);           // (N, D)
}

torch::Tensor TokenLayout::PadToInput(const torch::Tensor& packed) const {
  auto padded = Pad(packed);  // (B, T, D)
  if (length == padded_length) return padded;
  return at::constant_pad_nd(padded, {0, 0, 0, padded_length - length});  // (B, T_in, D)
}

}  // namespace trainyard::model
