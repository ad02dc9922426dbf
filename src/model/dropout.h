// Inverted dropout with a fast CPU mask generator.
//
// Same semantics as torch::nn::functional::dropout in training mode: every element is kept with
// probability 1 - p and scaled by 1 / (1 - p), else zeroed; the gradient flows through the same
// mask. What differs is only where the random bits come from. LibTorch's CPU bernoulli_ without
// MKL draws one 64-bit number per element through the generator (a virtual call and a lock-free
// but serial loop), which took ~10% of a BERT-Tiny training step. Here one 64-bit seed is taken
// from the default CPU generator per call and each element's bit comes from a counter-based hash
// of (seed, element index), so:
//   - runs stay reproducible from torch::manual_seed, and a checkpoint that stores the generator
//     state resumes with the same masks;
//   - the mask does not depend on the number of threads (elements are hashed independently);
//   - the masks differ from LibTorch's own (another random stream, same distribution).
// Non-CPU or non-float tensors use at::dropout (CUDA has its fused kernel).
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace trainyard::model {

// x * mask / (1 - p) with mask ~ Bernoulli(1 - p) when `training` and p > 0; x itself otherwise.
// p must be in [0, 1].
torch::Tensor Dropout(const torch::Tensor& x, double p, bool training);

// The CPU kernel, exposed for tests: fills out[0..n) with 0 or `scale`, keeping element i when
// Hash(seed, i) < keep_threshold (keep probability keep_threshold / 2^32).
void FillDropoutMask(float* out, int64_t n, uint64_t seed, uint32_t keep_threshold, float scale);

}  // namespace trainyard::model
