#include "model/compute_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace trainyard::model {
namespace {

// The blocks fn receives for ParallelFor(n, grain) on a pool of `threads`, sorted.
std::vector<std::pair<int64_t, int64_t>> Blocks(int threads, int64_t n, int64_t grain) {
  ComputePool& pool = ComputePool::Get();
  const int before = pool.threads();
  pool.SetThreads(threads);
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  pool.ParallelFor(
      n,
      [&](int64_t begin, int64_t end) {
        std::lock_guard<std::mutex> lock(mu);
        blocks.emplace_back(begin, end);
      },
      grain);
  pool.SetThreads(before);
  std::sort(blocks.begin(), blocks.end());
  return blocks;
}

using Ranges = std::vector<std::pair<int64_t, int64_t>>;

TEST(ComputePoolTest, OneContiguousBlockPerThreadNoSmallerThanTheGrain) {
  EXPECT_EQ(Blocks(3, 9, 1), (Ranges{{0, 3}, {3, 6}, {6, 9}}));
  EXPECT_EQ(Blocks(3, 10, 4), (Ranges{{0, 3}, {3, 6}, {6, 10}}));  // ceil(10 / 4) = 3 blocks
  EXPECT_EQ(Blocks(3, 10, 8), (Ranges{{0, 5}, {5, 10}}));          // 2 blocks
  EXPECT_EQ(Blocks(3, 10, 100), (Ranges{{0, 10}}));                // inline, one block
  EXPECT_EQ(Blocks(4, 2, 1), (Ranges{{0, 1}, {1, 2}}));            // never an empty block
  EXPECT_EQ(Blocks(2, 0, 1), Ranges{});
}

TEST(ComputePoolTest, AWorkersExceptionReachesTheCallerAndThePoolStaysUsable) {
  ComputePool& pool = ComputePool::Get();
  const int before = pool.threads();
  pool.SetThreads(2);
  EXPECT_THROW(pool.ParallelFor(2,
                                [](int64_t begin, int64_t) {
                                  if (begin == 1) throw std::runtime_error("block 1");
                                }),
               std::runtime_error);
  int64_t sum = 0;
  std::mutex mu;
  pool.ParallelFor(100, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    for (int64_t i = begin; i < end; ++i) sum += i;
  });
  pool.SetThreads(before);
  EXPECT_EQ(sum, 4950);
}

}  // namespace
}  // namespace trainyard::model
