// Turns a list of example indices into model-ready (B, T) tensors without per-step allocation.
//
// The builder owns CPU buffers sized for the largest batch (max_batch x max_length) and fills a
// prefix of them; on CPU the returned tensors are views of those buffers (valid until the next
// Build), on CUDA they are copied to the device. T is the longest sequence in the batch
// (dynamic padding) or a fixed `pad_to` (the article's pad-to-100).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "train/labeled_dataset.h"

namespace trainyard::train {

struct Batch {
  torch::Tensor input_ids;       // (B, T) int64
  torch::Tensor attention_mask;  // (B, T) int64, 1 = token, 0 = padding
  torch::Tensor token_type_ids;  // (B, T) int64
  torch::Tensor labels;          // (B) int64 (zeros when the set has no labels)
  int64_t size = 0;              // B
  int64_t length = 0;            // T
  int64_t real_tokens = 0;       // non-padding tokens in the batch
};

class BatchBuilder {
 public:
  BatchBuilder(int64_t max_batch, int64_t max_length, int32_t pad_id, torch::Device device);

  // `pad_to` 0 pads to the longest example of the batch; otherwise to exactly `pad_to`
  // (>= every length). Precondition: indices.size() <= max_batch, lengths <= max_length.
  Batch Build(const TokenizedSet& data, const std::vector<int32_t>& indices, int64_t pad_to = 0);

 private:
  int64_t max_batch_, max_length_;
  int32_t pad_id_;
  torch::Device device_;
  torch::Tensor ids_, mask_, types_, labels_;  // flat CPU buffers
};

}  // namespace trainyard::train
