#include "train/batch_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace trainyard::train {
namespace {

std::vector<int32_t> Lengths(int n) {
  std::vector<int32_t> lengths;
  for (int i = 0; i < n; ++i) lengths.push_back(3 + (i * 37) % 60);
  return lengths;
}

TEST(BatchPlanTest, EveryExampleExactlyOnce) {
  const auto lengths = Lengths(1000);
  BatchPlanOptions options;
  options.batch_size = 32;
  options.megabatch_batches = 4;
  BatchPlan plan = PlanBatches(lengths, options, 42, 1);
  std::multiset<int32_t> seen;
  int partial = 0;
  for (const auto& b : plan) {
    seen.insert(b.begin(), b.end());
    if (b.size() != 32) ++partial;
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(std::set<int32_t>(seen.begin(), seen.end()).size(), 1000u);
  EXPECT_LE(partial, 8);  // at most one per megabatch (1000 / 128 -> 8 megabatches)
}

TEST(BatchPlanTest, DeterministicBySeedAndEpoch) {
  const auto lengths = Lengths(500);
  BatchPlanOptions options;
  options.batch_size = 16;
  EXPECT_EQ(PlanBatches(lengths, options, 7, 2), PlanBatches(lengths, options, 7, 2));
  EXPECT_NE(PlanBatches(lengths, options, 7, 2), PlanBatches(lengths, options, 7, 3));
  EXPECT_NE(PlanBatches(lengths, options, 7, 2), PlanBatches(lengths, options, 8, 2));
}

// Length grouping must cut padding: the sum over batches of (batch max length * size) shrinks
// compared with random batches.
TEST(BatchPlanTest, LengthGroupingReducesPadding) {
  const auto lengths = Lengths(4096);
  auto padded_tokens = [&](const BatchPlan& plan) {
    int64_t total = 0;
    for (const auto& b : plan) {
      int32_t longest = 0;
      for (int32_t i : b) longest = std::max(longest, lengths[i]);
      total += static_cast<int64_t>(longest) * b.size();
    }
    return total;
  };
  BatchPlanOptions grouped;
  grouped.batch_size = 64;
  BatchPlanOptions random = grouped;
  random.length_grouping = false;
  EXPECT_LT(padded_tokens(PlanBatches(lengths, grouped, 1, 1)) * 3,
            padded_tokens(PlanBatches(lengths, random, 1, 1)) * 2);
}

TEST(BatchPlanTest, EvaluationPlanIsSortedAndUnshuffled) {
  const auto lengths = Lengths(100);
  BatchPlanOptions options;
  options.batch_size = 10;
  options.shuffle = false;
  BatchPlan plan = PlanBatches(lengths, options, 1, 0);
  ASSERT_EQ(plan.size(), 10u);
  int32_t previous = 1 << 30;
  for (const auto& b : plan) {
    for (int32_t i : b) {
      EXPECT_LE(lengths[i], previous);
      previous = lengths[i];
    }
  }
}

TEST(SplitMix64Test, BelowIsInRangeAndCoversIt) {
  SplitMix64 rng(3);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    uint64_t v = rng.Below(7);
    ASSERT_LT(v, 7u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
}

}  // namespace
}  // namespace trainyard::train
