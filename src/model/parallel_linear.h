// y = x w^T + b with the GEMMs split across ComputePool's threads (model/compute_pool.h).
//
// The trainer runs ATen and OpenBLAS single-threaded (model/cpu_runtime.h: their busy-waiting
// pools collapse under CPU contention) and uses its threads here instead, for the encoder's GEMMs
// (about 60% of a BERT-Tiny training step): the forward and input-gradient GEMMs are cut into row
// blocks of x, the weight-gradient GEMM into row blocks of w, one block per ComputePool thread,
// each a single-threaded BLAS call. Every output element is still one BLAS dot product over the
// full inner dimension, so the values are at::linear's up to the BLAS kernel's blocking, and a
// given thread count always gives the same bits.
//
// Used for 2-D float CPU inputs when the pool has more than one thread and x has at least 32 rows
// per thread; otherwise (CUDA, one thread, small x) it is at::linear. Under CPU autocast it does
// what autocast does to at::linear, casting x (float or bf16), w and b to bf16 (differentiably:
// the gradients come back as float32), and splits the bf16 GEMMs (oneDNN: AMX or AVX512-BF16)
// the same way.
#pragma once

#include <torch/torch.h>

namespace trainyard::model {

// x: (N, K), w: (M, K), b: (M) or undefined -> (N, M)
torch::Tensor ParallelLinear(const torch::Tensor& x, const torch::Tensor& w,
                             const torch::Tensor& b);

}  // namespace trainyard::model
