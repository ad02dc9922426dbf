#include "train/batch_plan.h"

#include <algorithm>
#include <numeric>

namespace trainyard::train {

uint64_t SplitMix64::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::Below(uint64_t bound) {
  // Rejection sampling removes the modulo bias.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return x % bound;
}

BatchPlan PlanBatches(const std::vector<int32_t>& lengths, const BatchPlanOptions& options,
                      uint64_t seed, int64_t epoch) {
  const size_t n = lengths.size();
  const size_t batch = static_cast<size_t>(std::max(1, options.batch_size));
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  SplitMix64 rng(seed * 0x100000001B3ull + static_cast<uint64_t>(epoch) * 0x9E3779B97F4A7C15ull);
  if (options.shuffle) rng.Shuffle(order);

  auto longest_first = [&](int32_t a, int32_t b) { return lengths[a] > lengths[b]; };
  size_t group = n;  // evaluation: one group, everything sorted
  if (options.shuffle) {
    group = options.length_grouping ? batch * std::max(1, options.megabatch_batches) : n;
  }
  BatchPlan plan;
  for (size_t start = 0; start < n; start += group) {
    const size_t end = std::min(n, start + group);
    if (options.length_grouping) {
      std::stable_sort(order.begin() + start, order.begin() + end, longest_first);
    }
    for (size_t b = start; b < end; b += batch) {
      plan.emplace_back(order.begin() + b, order.begin() + std::min(end, b + batch));
    }
  }
  if (options.shuffle && options.length_grouping) rng.Shuffle(plan);
  return plan;
}

}  // namespace trainyard::train
