#include "distributed/shard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <sstream>

namespace trainyard::distributed {
namespace {

std::string Join(const std::vector<int64_t>& v) {
  std::ostringstream out;
  for (size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << v[i];
  return out.str();
}

std::string Shards(const std::vector<int64_t>& perm, int world) {
  std::string out;
  for (int r = 0; r < world; ++r) {
    auto s = ShardIndices(perm, r, world);
    out += (r ? " | " : "") + (s.ok() ? Join(*s) : s.status().ToString());
  }
  return out;
}

TEST(ShardTest, StridedLikeDistributedSampler) {
  EXPECT_EQ(Shards({7, 3, 5, 1, 0, 2}, 2), "7,5,0 | 3,1,2");
}

TEST(ShardTest, PadsByWrappingSoEveryRankGetsTheSameCount) {
  // 5 samples on 3 ranks: padded to 6 with the first sample again.
  EXPECT_EQ(Shards({10, 11, 12, 13, 14}, 3), "10,13 | 11,14 | 12,10");
}

TEST(ShardTest, WorldLargerThanData) { EXPECT_EQ(Shards({4, 5}, 5), "4 | 5 | 4 | 5 | 4"); }

TEST(ShardTest, InvalidRankOrWorld) {
  EXPECT_EQ(ShardIndices({1}, 2, 2).status().ToString(),
            "INVALID_ARGUMENT: rank must be in [0, 2), got 2");
  EXPECT_EQ(ShardIndices({1}, 0, 0).status().ToString(),
            "INVALID_ARGUMENT: world size must be >= 1, got 0");
}

TEST(ShardTest, GlobalStepMatchesSingleProcessBatch) {
  // Step k on W ranks with batch b covers the same samples as step k of 1 rank with batch b*W.
  std::vector<int64_t> perm(40);
  std::iota(perm.begin(), perm.end(), 100);
  std::reverse(perm.begin(), perm.end());
  const int world = 4, b = 2;
  std::vector<int64_t> union_step1;
  for (int r = 0; r < world; ++r) {
    auto s = ShardIndices(perm, r, world);
    union_step1.insert(union_step1.end(), s->begin() + b, s->begin() + 2 * b);
  }
  std::sort(union_step1.begin(), union_step1.end());
  std::vector<int64_t> single(perm.begin() + b * world, perm.begin() + 2 * b * world);
  std::sort(single.begin(), single.end());
  EXPECT_EQ(Join(union_step1), Join(single));
}

TEST(ShardTest, ReshardOnResumeCoversEveryRemainingSampleOnce) {
  // 2 ranks trained 3 steps of 2 (12 positions) of 20 samples; resume on 3 ranks.
  std::vector<int64_t> perm(20);
  std::iota(perm.begin(), perm.end(), 0);
  const int64_t consumed = ConsumedPositions(20, 3, 2, 2);
  ASSERT_EQ(consumed, 12);
  std::vector<int64_t> all;
  for (int r = 0; r < 3; ++r) {
    auto s = ShardRemaining(perm, consumed, r, 3);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->size(), 3u);  // 8 remaining -> padded to 9
    all.insert(all.end(), s->begin(), s->end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(Join(all), "12,12,13,14,15,16,17,18,19");
}

TEST(ShardTest, ConsumedIsCappedAtThePaddedEpoch) {
  EXPECT_EQ(ConsumedPositions(5, 10, 4, 2), 6);
  EXPECT_TRUE(ShardRemaining({1, 2, 3}, 6, 0, 2)->empty());
}

}  // namespace
}  // namespace trainyard::distributed
