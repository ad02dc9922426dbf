// Embedding lookup whose backward touches only the rows a batch used.
//
// Forward is at::embedding(weight, ids, padding_idx). The gradient is the same as nn.Embedding's
// dense one (rows summed over the batch's tokens in token order, padding_idx row zero), but how it
// reaches weight.grad depends on what is there already:
//   - weight.grad undefined (first step, or after zero_grad(set_to_none)): a dense (V, D) tensor,
//     exactly at::embedding_dense_backward, which autograd stores as .grad;
//   - weight.grad a dense CPU tensor (every later step with zero_grad in place): a coalesced
//     sparse COO gradient over the U distinct ids, which AccumulateGrad adds into the existing
//     .grad in place (dense += sparse). The values are bit-identical to the dense path's
//     (0 + sum in token order, then added to .grad), but a step costs O(U * D) instead of
//     allocating, zero-filling and adding a (V, D) tensor (30522 x 128 floats for BERT).
// .grad therefore stays a dense tensor (what optimizers, clipping and the gradient all-reduce
// expect). CUDA tensors always take the dense path. Not twice differentiable.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace trainyard::model {

// weight: (V, D); ids: (N) or any shape, int64 -> (*ids.shape, D)
torch::Tensor EmbeddingLookup(const torch::Tensor& weight, const torch::Tensor& ids,
                              int64_t padding_idx);

}  // namespace trainyard::model
