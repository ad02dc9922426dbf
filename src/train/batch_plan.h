// Which examples go into which batch, in which order: the trainer's data order.
//
// A plan is a pure function of (lengths, options, seed, epoch), so a resumed run rebuilds the
// same order (the checkpoint also stores the current epoch's plan, to be independent of code
// changes). Randomness comes from our own SplitMix64/xoshiro-free generator below rather than
// std::uniform_int_distribution, whose output differs between standard libraries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace trainyard::train {

struct BatchPlanOptions {
  int batch_size = 128;
  // Shuffle the examples each epoch (training) or keep them in file order (evaluation).
  bool shuffle = true;
  // Group examples of similar length into the same batch so padding to the batch's longest
  // sequence wastes little: shuffle, cut into "megabatches" of `megabatch_batches` batches, sort
  // each megabatch by length (longest first), cut it into batches, then shuffle the batch order.
  // Without shuffling (evaluation) all examples are sorted by length.
  bool length_grouping = true;
  int megabatch_batches = 50;
};

using BatchPlan = std::vector<std::vector<int32_t>>;  // batches of example indices

// Every example appears in exactly one batch; all batches are full except at most one per
// megabatch (the last one of it). Deterministic in (lengths, options, seed, epoch).
BatchPlan PlanBatches(const std::vector<int32_t>& lengths, const BatchPlanOptions& options,
                      uint64_t seed, int64_t epoch);

// A small deterministic generator (SplitMix64) with an unbiased bounded draw.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  uint64_t Below(uint64_t bound);  // uniform in [0, bound), bound > 0
  template <typename T>
  void Shuffle(std::vector<T>& v) {  // Fisher-Yates
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(i)]);
  }

 private:
  uint64_t state_;
};

}  // namespace trainyard::train
