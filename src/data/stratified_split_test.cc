#include "data/stratified_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace trainyard::data {
namespace {

std::string Render(const SplitAllocation& a) {
  std::string s;
  for (const auto& row : a) {
    s += std::to_string(row[0]) + "/" + std::to_string(row[1]) + "/" + std::to_string(row[2]) + " ";
  }
  return s;
}

std::vector<int> Targets(const std::vector<int64_t>& counts) {
  std::vector<int> t;
  for (size_t c = 0; c < counts.size(); ++c) t.insert(t.end(), counts[c], static_cast<int>(c));
  return t;
}

TEST(StratifiedSplitTest, ExactCountsForTheSampleData) {
  // uci_sentiment.csv: 1500 negative, 1500 positive.
  EXPECT_EQ(Render(AllocateStratified({1500, 1500}, {})), "1200/150/150 1200/150/150 ");
}

TEST(StratifiedSplitTest, SplitSizesMatchSklearnAndClassesAreProportional) {
  // 2997 rows: sklearn gives 2397 / 300 / 300 for test_size=0.2 then 0.5.
  auto a = AllocateStratified({1000, 997, 1000}, {});
  int64_t train = 0, eval = 0, test = 0;
  for (const auto& r : a) train += r[0], eval += r[1], test += r[2];
  EXPECT_EQ(Render(a) + "| " + std::to_string(train) + "/" + std::to_string(eval) + "/" +
                std::to_string(test),
            "800/100/100 797/100/100 800/100/100 | 2397/300/300");
}

TEST(StratifiedSplitTest, ImbalancedClasses) {
  EXPECT_EQ(Render(AllocateStratified({900, 90, 10}, {})), "720/90/90 72/9/9 8/1/1 ");
  EXPECT_EQ(Render(AllocateStratified({7, 13}, {0.5, 0.25, 0.25})), "3/2/2 7/3/3 ");
}

TEST(StratifiedSplitTest, SmallClassesAreNeverLost) {
  // Presence wins over exact split sizes here: 805/103/102 instead of 808/101/101.
  EXPECT_EQ(Render(AllocateStratified({1000, 1, 2, 3, 4, 0}, {})),
            "800/100/100 1/0/0 1/1/0 1/1/1 2/1/1 0/0/0 ");
}

TEST(StratifiedSplitTest, ZeroFractionSplitGetsNothingAndMinimumsSkipIt) {
  EXPECT_EQ(Render(AllocateStratified({50, 2}, {0.8, 0.0, 0.2})), "41/0/9 1/0/1 ");
}

TEST(StratifiedSplitTest, TinyDatasetStillFillsEverySplit) {
  EXPECT_EQ(Render(AllocateStratified({5}, {})), "3/1/1 ");
}

TEST(StratifiedSplitTest, RowSumsAlwaysEqualClassCounts) {
  std::string bad;
  for (int64_t a = 0; a < 25; ++a) {
    for (int64_t b = 0; b < 25; ++b) {
      for (SplitFractions f :
           {SplitFractions{}, SplitFractions{0.6, 0.2, 0.2}, SplitFractions{0.7, 0.3, 0.0}}) {
        auto alloc = AllocateStratified({a, b, 3}, f);
        if (alloc[0][0] + alloc[0][1] + alloc[0][2] != a ||
            alloc[1][0] + alloc[1][1] + alloc[1][2] != b) {
          bad += std::to_string(a) + "," + std::to_string(b) + " ";
        }
      }
    }
  }
  EXPECT_EQ(bad, "");
}

TEST(StratifiedSplitTest, PartitionsAllRowsAndFollowsAllocation) {
  const std::vector<int64_t> counts = {40, 25, 7};
  auto targets = Targets(counts);
  auto split = StratifiedSplit(targets, 3, {}, 7);
  ASSERT_TRUE(split.ok()) << split.status();
  std::vector<size_t> all;
  SplitAllocation got(3, {0, 0, 0});
  for (int s = 0; s < kNumSplits; ++s) {
    all.insert(all.end(), (*split)[s].begin(), (*split)[s].end());
    for (size_t i : (*split)[s]) ++got[targets[i]][s];
  }
  std::sort(all.begin(), all.end());
  const bool partition =
      all.size() == targets.size() && std::adjacent_find(all.begin(), all.end()) == all.end();
  EXPECT_EQ(Render(got) + (partition ? "partition" : "NOT a partition"),
            "32/4/4 21/2/2 5/1/1 partition");
}

TEST(StratifiedSplitTest, SameSeedSameSplitOtherSeedDifferent) {
  auto targets = Targets({300, 200});
  auto a = StratifiedSplit(targets, 2, {}, 42);
  auto b = StratifiedSplit(targets, 2, {}, 42);
  auto c = StratifiedSplit(targets, 2, {}, 43);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(std::string(*a == *b ? "same" : "differ") + "/" + (*a == *c ? "same" : "differ"),
            "same/differ");
}

TEST(StratifiedSplitTest, SeedGivesAPinnedSplit) {
  // Guards the documented algorithm (our own Fisher-Yates on mt19937_64): a change here changes
  // every user's splits for their seed.
  auto split = StratifiedSplit(Targets({6, 4}), 2, {}, 1);
  ASSERT_TRUE(split.ok());
  std::string s;
  for (const auto& part : *split) {
    for (size_t i : part) s += std::to_string(i) + " ";
    s += "| ";
  }
  EXPECT_EQ(s, "4 3 9 1 6 0 | 5 8 | 7 2 | ");
}

TEST(StratifiedSplitTest, RejectsBadFractionsAndTargets) {
  EXPECT_EQ(
      StratifiedSplit({0, 1}, 2, {0.8, 0.1, 0.2}, 1).status().message(),
      "--train-fraction + --eval-fraction + --test-fraction must be 1, got 0.8 + 0.1 + 0.2 = 1.1");
  EXPECT_EQ(StratifiedSplit({0, 2}, 2, {}, 1).status().message(),
            "row 1 has class id 2, expected 0..1");
  EXPECT_EQ(ValidateFractions({1.2, -0.1, -0.1}).message(),
            "--train-fraction must be between 0 and 1, got 1.2");
}

}  // namespace
}  // namespace trainyard::data
