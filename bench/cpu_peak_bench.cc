// The machine's peak, measured rather than looked up: each thread runs fused multiply-adds on
// 8-float (AVX2) and, where the CPU has them, 16-float (AVX-512) vectors and AVX512-BF16 dot
// products, 12 independent accumulators deep so the units never wait on a result, for a fixed
// time. Prints GFLOP/s per core and for all cores, per kind, and the clock it implies assuming
// two FMA units (GFLOP/s / (2 x lanes x 2)): a clock far below the real one means one unit. A GEMM
// or a training step is measured against this (bench/README.md "Fraction of peak").
//
//   build/bench/cpu_peak_bench [--seconds 2] [--threads N]      (default: every online CPU)
//
// Not a test: no thresholds.
#include <immintrin.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kAccumulators = 12;
constexpr long kInner = 1 << 20;

// One pass: kInner x kAccumulators FMAs of 8 lanes = kInner * 12 * 16 FLOPs. The accumulators
// are named variables, not an array: an array is kept in memory and every FMA then waits on a
// store and a load (measured: a third of the peak).
__attribute__((target("avx2,fma"))) float Avx2Pass(float seed) {
  __m256 a0 = _mm256_set1_ps(seed), a1 = _mm256_set1_ps(seed + 1), a2 = _mm256_set1_ps(seed + 2),
         a3 = _mm256_set1_ps(seed + 3), a4 = _mm256_set1_ps(seed + 4),
         a5 = _mm256_set1_ps(seed + 5), a6 = _mm256_set1_ps(seed + 6),
         a7 = _mm256_set1_ps(seed + 7), a8 = _mm256_set1_ps(seed + 8),
         a9 = _mm256_set1_ps(seed + 9), a10 = _mm256_set1_ps(seed + 10),
         a11 = _mm256_set1_ps(seed + 11);
  const __m256 m = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < kInner; ++n) {
    a0 = _mm256_fmadd_ps(a0, m, b);
    a1 = _mm256_fmadd_ps(a1, m, b);
    a2 = _mm256_fmadd_ps(a2, m, b);
    a3 = _mm256_fmadd_ps(a3, m, b);
    a4 = _mm256_fmadd_ps(a4, m, b);
    a5 = _mm256_fmadd_ps(a5, m, b);
    a6 = _mm256_fmadd_ps(a6, m, b);
    a7 = _mm256_fmadd_ps(a7, m, b);
    a8 = _mm256_fmadd_ps(a8, m, b);
    a9 = _mm256_fmadd_ps(a9, m, b);
    a10 = _mm256_fmadd_ps(a10, m, b);
    a11 = _mm256_fmadd_ps(a11, m, b);
  }
  __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  sum = _mm256_add_ps(sum, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  float out[8];
  _mm256_storeu_ps(out, sum);
  return out[0];
}

// The same 12 accumulators on 16-float vectors (AVX-512F): 32 FLOPs per FMA.
__attribute__((target("avx512f"))) float Avx512Pass(float seed) {
  const __m512 m = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  __m512 a0 = _mm512_set1_ps(seed), a1 = _mm512_set1_ps(seed + 1), a2 = _mm512_set1_ps(seed + 2),
         a3 = _mm512_set1_ps(seed + 3), a4 = _mm512_set1_ps(seed + 4),
         a5 = _mm512_set1_ps(seed + 5), a6 = _mm512_set1_ps(seed + 6),
         a7 = _mm512_set1_ps(seed + 7), a8 = _mm512_set1_ps(seed + 8),
         a9 = _mm512_set1_ps(seed + 9), a10 = _mm512_set1_ps(seed + 10),
         a11 = _mm512_set1_ps(seed + 11);
  for (long n = 0; n < kInner; ++n) {
    a0 = _mm512_fmadd_ps(a0, m, b);
    a1 = _mm512_fmadd_ps(a1, m, b);
    a2 = _mm512_fmadd_ps(a2, m, b);
    a3 = _mm512_fmadd_ps(a3, m, b);
    a4 = _mm512_fmadd_ps(a4, m, b);
    a5 = _mm512_fmadd_ps(a5, m, b);
    a6 = _mm512_fmadd_ps(a6, m, b);
    a7 = _mm512_fmadd_ps(a7, m, b);
    a8 = _mm512_fmadd_ps(a8, m, b);
    a9 = _mm512_fmadd_ps(a9, m, b);
    a10 = _mm512_fmadd_ps(a10, m, b);
    a11 = _mm512_fmadd_ps(a11, m, b);
  }
  __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  sum = _mm512_add_ps(sum, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  float out[16];
  _mm512_storeu_ps(out, sum);
  return out[0];
}

// bf16 dot products into fp32 (AVX512-BF16 vdpbf16ps): each instruction multiplies 32 bf16 pairs
// and adds them into 16 fp32 lanes, 64 FLOPs.
__attribute__((target("avx512f,avx512bf16"))) float Bf16Pass(float seed) {
  const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(seed));
  __m512 a0 = _mm512_set1_ps(seed), a1 = _mm512_set1_ps(seed + 1), a2 = _mm512_set1_ps(seed + 2),
         a3 = _mm512_set1_ps(seed + 3), a4 = _mm512_set1_ps(seed + 4),
         a5 = _mm512_set1_ps(seed + 5), a6 = _mm512_set1_ps(seed + 6),
         a7 = _mm512_set1_ps(seed + 7), a8 = _mm512_set1_ps(seed + 8),
         a9 = _mm512_set1_ps(seed + 9), a10 = _mm512_set1_ps(seed + 10),
         a11 = _mm512_set1_ps(seed + 11);
  for (long n = 0; n < kInner; ++n) {
    a0 = _mm512_dpbf16_ps(a0, x, x);
    a1 = _mm512_dpbf16_ps(a1, x, x);
    a2 = _mm512_dpbf16_ps(a2, x, x);
    a3 = _mm512_dpbf16_ps(a3, x, x);
    a4 = _mm512_dpbf16_ps(a4, x, x);
    a5 = _mm512_dpbf16_ps(a5, x, x);
    a6 = _mm512_dpbf16_ps(a6, x, x);
    a7 = _mm512_dpbf16_ps(a7, x, x);
    a8 = _mm512_dpbf16_ps(a8, x, x);
    a9 = _mm512_dpbf16_ps(a9, x, x);
    a10 = _mm512_dpbf16_ps(a10, x, x);
    a11 = _mm512_dpbf16_ps(a11, x, x);
  }
  __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  sum = _mm512_add_ps(sum, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  float out[16];
  _mm512_storeu_ps(out, sum);
  return out[0];
}

// One kind of pass: its function and the FLOPs of one call.
struct Kernel {
  const char* name;
  float (*pass)(float);
  double flops;
};

double RunThread(const Kernel& kernel, double seconds, std::atomic<bool>* go) {
  while (!go->load()) {
  }
  const auto start = std::chrono::steady_clock::now();
  double flops = 0;
  float sink = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    sink += kernel.pass(sink * 1e-9f + 1.0f);
    flops += kernel.flops;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (sink == 12345.0f) std::puts("");  // keeps the work
  return flops / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  int threads = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--threads") == 0) threads = std::atoi(argv[i + 1]);
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::puts("cpu_peak_bench: this CPU has no AVX2 with FMA");
    return 1;
  }
  const double per_pass = static_cast<double>(kInner) * kAccumulators;
  std::vector<Kernel> kernels = {{"fp32 AVX2 FMA", Avx2Pass, per_pass * 8 * 2}};
  if (__builtin_cpu_supports("avx512f")) {
    kernels.push_back({"fp32 AVX-512 FMA", Avx512Pass, per_pass * 16 * 2});
  }
  if (__builtin_cpu_supports("avx512bf16")) {
    kernels.push_back({"bf16 AVX512-BF16 dot", Bf16Pass, per_pass * 32 * 2});
  }
  for (const Kernel& kernel : kernels) {
    for (int n : {1, threads}) {
      std::atomic<bool> go{false};
      std::vector<double> rates(static_cast<size_t>(n));
      std::vector<std::thread> pool;
      for (int t = 0; t < n; ++t) {
        pool.emplace_back(
            [&, t] { rates[static_cast<size_t>(t)] = RunThread(kernel, seconds, &go); });
      }
      go = true;
      for (auto& t : pool) t.join();
      double total = 0;
      for (double r : rates) total += r;
      // FLOPs per cycle per core with two vector FMA units: 2 x lanes x 2 (x2 for bf16 pairs).
      const double per_cycle = kernel.flops / per_pass * 2;
      std::printf("%-22s threads %d: %.1f GFLOP/s (%.1f per core; %.2f GHz at %.0f FLOP/cycle)\n",
                  kernel.name, n, total / 1e9, total / n / 1e9, total / n / per_cycle / 1e9,
                  per_cycle);
      if (n == threads) break;
    }
  }
  return 0;
}
