// The machine's fp32 peak, measured rather than looked up: each thread runs fused multiply-adds
// on 8-float (AVX2) or 16-float (AVX-512) vectors, 12 independent accumulators deep so the FMA
// units never wait on a result, for a fixed time. Prints GFLOP/s per core and for all cores, the
// vector width used and the clock it implies (GFLOP/s / (2 FMA units x lanes x 2)). A GEMM or a
// training step is measured against this (bench/README.md "Fraction of peak").
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

double RunThread(double seconds, std::atomic<bool>* go) {
  while (!go->load()) {
  }
  const auto start = std::chrono::steady_clock::now();
  double flops = 0;
  float sink = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    sink += Avx2Pass(sink * 1e-9f + 1.0f);
    flops += static_cast<double>(kInner) * kAccumulators * 8 * 2;
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
  for (int n : {1, threads}) {
    std::atomic<bool> go{false};
    std::vector<double> rates(static_cast<size_t>(n));
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t) {
      pool.emplace_back([&, t] { rates[static_cast<size_t>(t)] = RunThread(seconds, &go); });
    }
    go = true;
    for (auto& t : pool) t.join();
    double total = 0;
    for (double r : rates) total += r;
    // 2 FMA pipes x 8 lanes x 2 FLOPs per cycle on AVX2 cores with two 256-bit FMA units.
    std::printf(
        "threads %d: %.1f GFLOP/s fp32 (%.1f per core; AVX2 FMA: %.2f GHz at 32 FLOP/cycle)\n", n,
        total / 1e9, total / n / 1e9, total / n / 32 / 1e9);
    if (n == threads) break;
  }
  return 0;
}
