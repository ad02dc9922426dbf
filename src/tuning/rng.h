// A small, portable, seedable random generator (xoshiro256** seeded through SplitMix64).
//
// std::uniform_real_distribution & co. are implementation-defined, so a study resumed by another
// build could diverge; every draw here is defined by this file alone. Searchers derive a fresh
// generator per suggestion from (seed, stream, counter), so their state is a few integers.
#pragma once

#include <cmath>
#include <cstdint>

namespace trainyard::tuning {

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& s : s_) s = SplitMix(&x);
  }
  // A generator for draw number `counter` of stream `stream` of a study seeded with `seed`.
  static Rng For(uint64_t seed, uint64_t stream, uint64_t counter) {
    uint64_t x = seed ^ (0x9e3779b97f4a7c15ULL * (stream + 1));
    uint64_t a = SplitMix(&x);
    x ^= counter * 0xbf58476d1ce4e5b9ULL;
    return Rng(a ^ SplitMix(&x));
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); n > 0. (Lemire's multiply-shift; the tiny bias is irrelevant here.)
  uint64_t UniformInt(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  // Standard normal (Box-Muller; one value per call, keeps no spare so the state stays 4 words).
  double Normal() {
    double u1 = Uniform();
    double u2 = Uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t SplitMix(uint64_t* x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace trainyard::tuning
