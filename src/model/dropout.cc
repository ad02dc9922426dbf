#include "model/dropout.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <mutex>

#include "model/compute_pool.h"
#include "model/simd.h"

namespace trainyard::model {
namespace {

// murmur3's 32-bit finaliser: a bijection with full avalanche, so consecutive counters give
// independent-looking words. Only 32-bit integer ops, which vectorise on every x86 level.
inline uint32_t Mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

TRAINYARD_MULTIVERSION
void FillMaskRange(float* __restrict out, int64_t begin, int64_t end, uint32_t s0, uint32_t s1,
                   uint32_t keep_threshold, float scale) {
  for (int64_t i = begin; i < end; ++i) {
    const uint64_t c = static_cast<uint64_t>(i);
    const uint32_t h =
        Mix32(Mix32(static_cast<uint32_t>(c) ^ s0) + (static_cast<uint32_t>(c >> 32) ^ s1));
    out[i] = h < keep_threshold ? scale : 0.0f;
  }
}

uint64_t NextSeed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

}  // namespace

void FillDropoutMask(float* out, int64_t n, uint64_t seed, uint32_t keep_threshold, float scale) {
  const uint32_t s0 = static_cast<uint32_t>(seed), s1 = static_cast<uint32_t>(seed >> 32);
  ComputePool::Get().ParallelFor(
      n,
      [&](int64_t begin, int64_t end) {
        FillMaskRange(out, begin, end, s0, s1, keep_threshold, scale);
      },
      int64_t{1} << 16);
}

torch::Tensor Dropout(const torch::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return x;
  if (p >= 1 || !x.device().is_cpu() || x.scalar_type() != torch::kFloat) {
    return at::dropout(x, p, /*train=*/true);
  }
  // keep element when hash < threshold: P(keep) = threshold / 2^32 = 1 - p (to 2^-32).
  const double keep = 1.0 - p;
  const uint32_t threshold =
      static_cast<uint32_t>(std::min(4294967295.0, std::round(keep * 4294967296.0)));
  // The scale as at::dropout computes it: float(1) / float(1 - p).
  const float scale = 1.0f / static_cast<float>(keep);
  torch::Tensor mask = torch::empty(x.sizes(), x.options().requires_grad(false));  // like x
  FillDropoutMask(mask.data_ptr<float>(), mask.numel(), NextSeed(), threshold, scale);
  return x * mask;
}

}  // namespace trainyard::model
