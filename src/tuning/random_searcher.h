// RandomSearcher: independent draws from the search space (SearchSpace::Sample), so log and
// reverse-log scales and conditional parameters are honoured. Draw i of a study comes from
// Rng::For(seed, kRandomStream, i): the state is the seed and a counter.
#pragma once

#include <cstdint>

#include "tuning/search_space.h"
#include "tuning/searcher.h"

namespace trainyard::tuning {

class RandomSearcher : public Searcher {
 public:
  RandomSearcher(const StudySpec& spec, uint64_t seed);

  std::string_view Name() const override { return "random"; }
  // `count` draws, each distinct from the history and from each other when the space allows it
  // (up to 100 redraws; a tiny discrete space then repeats points). Never exhausted.
  StatusOr<Suggestions> Suggest(int count, const SearchHistory& history) override;
  nlohmann::json SaveState() const override;
  Status RestoreState(const nlohmann::json& state) override;

 private:
  SearchSpace space_;
  uint64_t seed_;
  uint64_t draws_ = 0;
};

}  // namespace trainyard::tuning
