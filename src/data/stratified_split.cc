#include "data/stratified_split.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace trainyard::data {
namespace {

// Guards floor() against 0.1 * 30 = 3.0000000000000004-style representation error.
constexpr double kEps = 1e-9;

int64_t Floor(double x) { return static_cast<int64_t>(std::floor(x + kEps)); }

// Uniform in [0, n) without modulo bias; std::uniform_int_distribution is not specified exactly by
// the standard, so it would make splits differ between standard libraries.
uint64_t Below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: draws below it would bias the result
  uint64_t x = rng();
  while (x < threshold) x = rng();
  return x % n;
}

void Shuffle(std::vector<size_t>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(rng, i)]);
}

std::string Num(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace

const char* SplitName(Split s) {
  switch (s) {
    case Split::kTrain:
      return "train";
    case Split::kEval:
      return "eval";
    case Split::kTest:
      return "test";
  }
  return "?";
}

Status ValidateFractions(const SplitFractions& f) {
  for (int s = 0; s < kNumSplits; ++s) {
    if (!(f[s] >= 0.0 && f[s] <= 1.0)) {  // also rejects NaN
      return InvalidArgumentError("--" + std::string(SplitName(static_cast<Split>(s))) +
                                  "-fraction must be between 0 and 1, got " + Num(f[s]));
    }
  }
  if (f.train <= 0.0) return InvalidArgumentError("--train-fraction must be > 0");
  const double sum = f.train + f.eval + f.test;
  if (std::fabs(sum - 1.0) > 1e-6) {
    return InvalidArgumentError(
        "--train-fraction + --eval-fraction + --test-fraction must be 1, got " + Num(f.train) +
        " + " + Num(f.eval) + " + " + Num(f.test) + " = " + Num(sum));
  }
  return Status::Ok();
}

namespace {

using SplitSizes = std::array<int64_t, kNumSplits>;

// Step 1: split sizes for n rows by largest remainder.
SplitSizes LargestRemainderSizes(int64_t n, const SplitFractions& f) {
  SplitSizes size{};
  std::array<double, kNumSplits> rem{};
  int64_t placed = 0;
  for (int s = 0; s < kNumSplits; ++s) {
    const double ideal = static_cast<double>(n) * f[s];
    size[s] = Floor(ideal);
    rem[s] = ideal - static_cast<double>(size[s]);
    placed += size[s];
  }
  while (placed < n) {
    int best = 0;
    for (int s = 1; s < kNumSplits; ++s) {
      if (rem[s] > rem[best] + kEps) best = s;
    }
    ++size[best];
    rem[best] = -1.0;
    ++placed;
  }
  return size;
}

// What steps 2-3 leave for step 4 to hand out.
struct Owed {
  std::vector<std::array<double, kNumSplits>> ideal;  // ideal[c][s]: class c's exact share of s
  std::vector<int64_t> left;                          // rows of class c not yet placed
  SplitSizes deficit;                                 // rows split s still lacks
};

// Steps 2-3: every class gets the floor of its share of each split, and at least one row in each
// non-empty split while it has rows to give.
Owed AllocateFloors(const std::vector<int64_t>& class_counts, const SplitFractions& f,
                    const SplitSizes& size, int64_t n, SplitAllocation* alloc) {
  SplitAllocation& a = *alloc;
  const size_t k = class_counts.size();
  Owed owed{std::vector<std::array<double, kNumSplits>>(k), std::vector<int64_t>(k, 0), size};
  auto& ideal = owed.ideal;
  for (size_t c = 0; c < k; ++c) {
    const int64_t nc = class_counts[c];
    std::array<int64_t, kNumSplits> min{};
    int rank = 0;
    for (int s = 0; s < kNumSplits; ++s) {
      ideal[c][s] = static_cast<double>(nc) * static_cast<double>(size[s]) / static_cast<double>(n);
      if (f[s] > 0.0) min[s] = (nc >= ++rank) ? 1 : 0;  // Step 3.
      a[c][s] = std::max(Floor(ideal[c][s]), min[s]);   // Step 2.
    }
    int64_t sum = a[c][0] + a[c][1] + a[c][2];
    while (sum > nc) {  // Minimums overshot a tiny class: give back the most over-served row.
      int give = -1;
      for (int s = 0; s < kNumSplits; ++s) {
        if (a[c][s] <= min[s]) continue;
        if (give < 0 || a[c][s] - ideal[c][s] > a[c][give] - ideal[c][give] + kEps) give = s;
      }
      --a[c][give];
      --sum;
    }
    owed.left[c] = nc - sum;
    for (int s = 0; s < kNumSplits; ++s) owed.deficit[s] -= a[c][s];
  }
  return owed;
}

// Step 4, first pass: one extra row per (class, split) pair in order of remainder.
void GiveByRemainder(const std::vector<int64_t>& class_counts, const SplitFractions& f,
                     SplitAllocation* alloc, Owed* owed) {
  SplitAllocation& a = *alloc;
  struct Candidate {
    double remainder;
    size_t c;
    int s;
  };
  std::vector<Candidate> candidates;
  for (size_t c = 0; c < class_counts.size(); ++c) {
    if (owed->left[c] == 0) continue;
    for (int s = 0; s < kNumSplits; ++s) {
      if (f[s] > 0.0) {
        candidates.push_back({owed->ideal[c][s] - static_cast<double>(a[c][s]), c, s});
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Candidate& x, const Candidate& y) {
                     if (std::fabs(x.remainder - y.remainder) > kEps) {
                       return x.remainder > y.remainder;
                     }
                     if (class_counts[x.c] != class_counts[y.c]) {
                       return class_counts[x.c] > class_counts[y.c];
                     }
                     return x.c != y.c ? x.c < y.c : x.s < y.s;
                   });
  for (const Candidate& cand : candidates) {
    if (owed->left[cand.c] > 0 && owed->deficit[cand.s] > 0) {
      ++a[cand.c][cand.s];
      --owed->left[cand.c];
      --owed->deficit[cand.s];
    }
  }
}

// Step 4, second pass: whatever is left (a class needing two rows where only one split had room,
// or splits overfilled by step 3) goes where it is most owed, preferring splits with room.
void GiveLeftovers(const SplitFractions& f, SplitAllocation* alloc, Owed* owed) {
  SplitAllocation& a = *alloc;
  for (size_t c = 0; c < owed->left.size(); ++c) {
    while (owed->left[c] > 0) {
      int best = -1;
      for (int s = 0; s < kNumSplits; ++s) {
        if (f[s] <= 0.0) continue;
        auto key = [&](int t) {
          return std::make_pair(owed->deficit[t] > 0 ? 1 : 0,
                                owed->ideal[c][t] - static_cast<double>(a[c][t]));
        };
        if (best < 0 || key(s) > key(best)) best = s;
      }
      ++a[c][best];
      --owed->left[c];
      --owed->deficit[best];
    }
  }
}

}  // namespace

SplitAllocation AllocateStratified(const std::vector<int64_t>& class_counts,
                                   const SplitFractions& f) {
  int64_t n = 0;
  for (int64_t c : class_counts) n += c;
  SplitAllocation a(class_counts.size(), {0, 0, 0});
  if (n == 0) return a;
  const SplitSizes size = LargestRemainderSizes(n, f);
  Owed owed = AllocateFloors(class_counts, f, size, n, &a);
  GiveByRemainder(class_counts, f, &a, &owed);
  GiveLeftovers(f, &a, &owed);
  return a;
}

StatusOr<SplitIndices> StratifiedSplit(const std::vector<int>& targets, int num_classes,
                                       const SplitFractions& f, uint64_t seed) {
  TY_RETURN_IF_ERROR(ValidateFractions(f));
  if (num_classes < 0) return InvalidArgumentError("num_classes must be >= 0");
  std::vector<std::vector<size_t>> by_class(static_cast<size_t>(num_classes));
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] < 0 || targets[i] >= num_classes) {
      return InvalidArgumentError("row " + std::to_string(i) + " has class id " +
                                  std::to_string(targets[i]) + ", expected 0.." +
                                  std::to_string(num_classes - 1));
    }
    by_class[static_cast<size_t>(targets[i])].push_back(i);
  }
  std::vector<int64_t> counts;
  for (const auto& rows : by_class) counts.push_back(static_cast<int64_t>(rows.size()));
  const SplitAllocation alloc = AllocateStratified(counts, f);

  std::mt19937_64 rng(seed);
  SplitIndices out;
  for (size_t c = 0; c < by_class.size(); ++c) {
    Shuffle(by_class[c], rng);
    size_t next = 0;
    for (int s = 0; s < kNumSplits; ++s) {
      for (int64_t j = 0; j < alloc[c][s]; ++j) out[s].push_back(by_class[c][next++]);
    }
  }
  for (auto& split : out) Shuffle(split, rng);
  return out;
}

}  // namespace trainyard::data
