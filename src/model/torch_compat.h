// The LibTorch API differences between the versions the trainer builds against, in one place:
// Debian 12's libtorch-dev 1.13 (CPU; CI), Debian 13's 2.6 (scripts/libtorch2-check.sh) and the
// LibTorch bundled with PyTorch 2.x wheels (CUDA; scripts/gpu-check.sh). This is the only file
// of src/model, src/train and src/distributed that tests TORCH_VERSION_*; code elsewhere calls
// these functions or branches on the constants (`if (compat::kHasFusedAttention && ...)`).
//
// What differs:
//   - at::scaled_dot_product_attention (the fused flash / memory-efficient attention kernels)
//     exists from 2.0.
//   - bf16 autocast on CUDA: 1.13 has no usable bf16 CUDA path in this project's builds; 2.0-2.3
//     set it with set_autocast_gpu_dtype/set_enabled, 2.4+ with the device-typed
//     set_autocast_dtype(kCUDA, ...)/set_autocast_enabled(kCUDA, ...) (the old names are gone).
//   - CPU autocast is queried with is_cpu_enabled() before 2.4, is_autocast_enabled(kCPU) after.
//   - c10d: ProcessGroupGloo / ProcessGroupNCCL derive from c10d::ProcessGroup up to 1.13 and from
//     c10d::Backend (what a 2.x ProcessGroup dispatches to) from 2.0 (C10dBackend below).
//   - c10d::TCPStoreOptions::useLibUV (2.2+) defaults to true from 2.4, and a LibTorch built
//     without libuv (Debian 13's 2.6) then refuses to make a TCPStore ("use_libuv was requested
//     but PyTorch was build without libuv support"): UseClassicTcpStore below.
//
// src/distributed includes this header too (header only: no link dependency on src/model).
//
// All functions are thread-safe in the sense LibTorch's are: autocast state is thread-local.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <type_traits>

namespace c10d {
class Backend;
class ProcessGroup;
}  // namespace c10d

namespace trainyard::model::compat {

// TORCH_VERSION_MAJOR.MINOR >= major.minor of the LibTorch this file is compiled against.
constexpr bool TorchAtLeast(int major, int minor) {
  return TORCH_VERSION_MAJOR > major ||
         (TORCH_VERSION_MAJOR == major && TORCH_VERSION_MINOR >= minor);
}

// "1.13.1", "2.6.0", ...: the LibTorch this build uses (for messages and benchmark rows).
inline const char* TorchVersion() { return TORCH_VERSION; }

// at::scaled_dot_product_attention is available (LibTorch >= 2.0).
inline constexpr bool kHasFusedAttention = TorchAtLeast(2, 0);

// bf16 autocast on CUDA is available (LibTorch >= 2.0).
inline constexpr bool kHasCudaBf16Autocast = TorchAtLeast(2, 0);

// The c10d base class of ProcessGroupGloo and ProcessGroupNCCL, to hold either by: both bases
// declare allreduce(tensors, options) and broadcast(tensors, options) alike. Include
// <torch/csrc/distributed/c10d/Backend.hpp> and ProcessGroup.hpp (both exist from 1.13) to use it.
using C10dBackend = std::conditional_t<TorchAtLeast(2, 0), c10d::Backend, c10d::ProcessGroup>;

// Selects the classic socket TCPStore backend, which every LibTorch has (the only one before
// 2.2), in `options` (a c10d::TCPStoreOptions); no-op where the options have no useLibUV.
template <typename TcpStoreOptions>
void UseClassicTcpStore(TcpStoreOptions& options) {
  if constexpr (requires { options.useLibUV; }) options.useLibUV = false;
}

// softmax(q k^T / sqrt(HS) + mask) v with dropout `dropout_p` on the probabilities, by
// at::scaled_dot_product_attention. q (B, NH, Tq, HS), k and v (B, NH, T, HS), mask additive,
// broadcastable to (B, NH, Tq, T), of q's dtype. Returns (B, NH, Tq, HS). Precondition:
// kHasFusedAttention (otherwise it throws c10::Error).
inline torch::Tensor FusedAttention(const torch::Tensor& q, const torch::Tensor& k,
                                    const torch::Tensor& v, const torch::Tensor& mask,
                                    double dropout_p) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, mask, dropout_p, /*is_causal=*/false);
#else
  TORCH_CHECK(false, "scaled_dot_product_attention needs LibTorch >= 2.0, this is ", TORCH_VERSION);
#endif
}

// Whether CPU autocast is on in this thread (false on versions without CPU autocast).
inline bool CpuAutocastEnabled() {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::is_autocast_enabled(at::kCPU);
#else
  return at::autocast::is_cpu_enabled();
#endif
}

// Turns bf16 autocast on CUDA on (dtype bfloat16) or off for this thread; turning it off also
// clears the autocast weight cache. No-op when !kHasCudaBf16Autocast.
inline void SetCudaBf16Autocast(bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  if (enabled) at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCUDA, enabled);
#elif TORCH_VERSION_MAJOR == 2
  if (enabled) at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  at::autocast::set_enabled(enabled);
#endif
#if TORCH_VERSION_MAJOR >= 2
  if (!enabled) at::autocast::clear_cache();
#else
  (void)enabled;
#endif
}

// Turns bf16 autocast on CPU on (dtype bfloat16) or off for this thread; turning it off also
// clears the autocast weight cache. Every supported LibTorch has CPU autocast (since 1.10).
// Under it ATen runs linear/matmul/bmm in bf16 through oneDNN, which uses AMX tiles or
// AVX512-BF16 where the CPU has them.
inline void SetCpuBf16Autocast(bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  if (enabled) at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCPU, enabled);
#else
  if (enabled) at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(enabled);
#endif
  if (!enabled) at::autocast::clear_cache();
}

}  // namespace trainyard::model::compat
