// Deterministic stratified train/eval/test split (the article's two train_test_split calls with
// stratify=Target, as one exact three-way allocation).
//
// Algorithm (changing it changes every user's splits for a given seed):
//  1. Split sizes: T_s = N * f_s rounded by largest remainder, so T_train + T_eval + T_test = N
//     (ties go to the earlier split: train, eval, test). 80/10/10 of 2997 rows -> 2397/300/300,
//     the same sizes sklearn's train_test_split(test_size=0.2) then (test_size=0.5) gives.
//  2. Per class c with n_c rows, its ideal share of split s is q = n_c * T_s / N. Start from
//  floor(q).
//  3. Small classes are never lost: for the splits with a non-zero fraction, taken in the order
//     train, eval, test, the k-th one gets at least one row of every class with >= k rows (so a
//     class of 1 row lands in train, of 2 rows in train and eval, of >= 3 rows in all three). Where
//     that overshoots n_c, the split holding the most above its ideal share gives rows back.
//  4. The rows still unplaced (at most 2 per class) go one by one to the (class, split) pairs with
//     the largest remainder q - count, only into splits still below their size T_s; ties prefer the
//     larger class, then the lower class id, then the earlier split. Split sizes are exact unless
//     step 3 had to overfill a split (many tiny classes), in which case presence wins.
//  5. Rows: each class's row indices (in input order) are shuffled, then dealt to train, eval, test
//     in that order; finally each split's rows are shuffled (the article's splits are shuffled
//     too). All randomness comes from one std::mt19937_64 seeded with `seed`, consumed in a fixed
//     order (classes by id, then train, eval, test), with our own Fisher-Yates and unbiased bounded
//     draws, so a seed gives the same split on every platform and standard library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::data {

inline constexpr int kNumSplits = 3;
enum class Split { kTrain = 0, kEval = 1, kTest = 2 };
// "train", "eval", "test".
const char* SplitName(Split s);

struct SplitFractions {
  double train = 0.8;
  double eval = 0.1;
  double test = 0.1;

  double operator[](int s) const { return s == 0 ? train : (s == 1 ? eval : test); }
};

// OK if every fraction is in [0, 1], train > 0 and the three sum to 1 (within 1e-6); otherwise
// INVALID_ARGUMENT naming the offending --*-fraction flag.
Status ValidateFractions(const SplitFractions& f);

// counts[c][s]: rows of class c that go to split s. Row sums equal class_counts.
using SplitAllocation = std::vector<std::array<int64_t, kNumSplits>>;

// Steps 1-4 above. Precondition: ValidateFractions(f).ok().
SplitAllocation AllocateStratified(const std::vector<int64_t>& class_counts,
                                   const SplitFractions& f);

// Row indices (into the input vector) of each split, in output order.
using SplitIndices = std::array<std::vector<size_t>, kNumSplits>;

// Steps 1-5: splits rows whose class ids are `targets` (each in [0, num_classes)). INVALID_ARGUMENT
// for bad fractions or an out-of-range target.
StatusOr<SplitIndices> StratifiedSplit(const std::vector<int>& targets, int num_classes,
                                       const SplitFractions& f, uint64_t seed);

}  // namespace trainyard::data
