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
// per thread; otherwise (CUDA, CPU autocast, one thread, small x) it is at::linear. Under CPU
// autocast the GEMMs are bf16 ones in oneDNN, which are not split here: oneDNN 2.6 (Debian 12's)
// died with std::bad_alloc creating an AMX kernel for a row block of BERT-Tiny's (128 of 256
// rows), serialised or not, where whole-matrix calls of the same run did not.
#pragma once

#include <torch/torch.h>

namespace trainyard::model {

// x: (N, K), w: (M, K), b: (M) or undefined -> (N, M)
torch::Tensor ParallelLinear(const torch::Tensor& x, const torch::Tensor& w,
                             const torch::Tensor& b);

}  // namespace trainyard::model
