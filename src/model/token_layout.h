// Which positions of a padded (B, T) batch the encoder computes, and how to move between the
// packed token-major form (N, D) that every token-wise op runs on and the (B, T, D) form that
// attention needs.
//
// Computed positions are the real tokens (attention_mask != 0) plus position 0 of every row:
// HF's pooler reads hidden[:, 0] whatever the mask says, so [CLS] is always computed (for the
// usual right-padded batch it is a real token anyway). Padding never enters a real token's value
// except as a masked attention key, whose softmax weight is exactly 0, so dropping the padded
// positions from every token-wise op and trimming T to the last computed column changes no
// computed value (up to float summation order in the softmax/bmm reductions). Returned sequence
// outputs are zero at positions that were not computed.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace trainyard::model {

struct TokenLayout {
  int64_t batch = 0;          // B
  int64_t length = 0;         // T after trimming: 1 + the last column any row computes
  int64_t padded_length = 0;  // T of the input batch
  int64_t tokens = 0;         // N computed positions
  torch::Tensor index;  // (N) int64 flat positions b * T + t, ascending; undefined when N == B * T
  torch::Tensor keep;   // (B, T) bool, true for real tokens (the attention keys)
  torch::Tensor first;  // (B) int64: row in the (N, D) form of each sequence's position 0

  // attention_mask: (B, T') int64/bool (1 or true = token) or undefined (all tokens);
  // input_ids gives B, T' and the device.
  static TokenLayout FromMask(const torch::Tensor& input_ids, const torch::Tensor& attention_mask);

  bool dense() const { return !index.defined(); }
  // (B, T', ...) -> (N, ...): the computed positions of a per-position input (ids, types).
  torch::Tensor Gather(const torch::Tensor& per_position) const;
  // (N) int64 position ids t of the computed tokens (for the position embeddings).
  torch::Tensor Positions() const;
  // (N, D) -> (B, T, D), zeros at positions not computed.
  torch::Tensor Pad(const torch::Tensor& packed) const;
  // (B, T, D) -> (N, D)
  torch::Tensor Unpad(const torch::Tensor& padded) const;
  // (N, D) -> (B, T', D) over the input's untrimmed length, zeros elsewhere.
  torch::Tensor PadToInput(const torch::Tensor& packed) const;
};

}  // namespace trainyard::model
