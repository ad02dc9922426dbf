#include "tuning/random_searcher.h"

#include <set>

#include "tuning/searcher_state.h"

namespace trainyard::tuning {
namespace {
constexpr uint64_t kRandomStream = 1;
constexpr int kMaxRedraws = 100;
}  // namespace

RandomSearcher::RandomSearcher(const StudySpec& spec, uint64_t seed) : space_(spec), seed_(seed) {}

StatusOr<Suggestions> RandomSearcher::Suggest(int count, const SearchHistory& history) {
  std::set<std::string> seen;
  for (const Observation& o : history.completed) seen.insert(SearchSpace::Key(o.parameters));
  for (const ParameterSet& p : history.pending) seen.insert(SearchSpace::Key(p));
  Suggestions out;
  for (int i = 0; i < count; ++i) {
    ParameterSet set;
    for (int attempt = 0; attempt <= kMaxRedraws; ++attempt) {
      Rng rng = Rng::For(seed_, kRandomStream, draws_++);
      set = space_.Sample(rng);
      if (!seen.count(SearchSpace::Key(set))) break;
    }
    seen.insert(SearchSpace::Key(set));
    out.parameter_sets.push_back(std::move(set));
  }
  return out;
}

nlohmann::json RandomSearcher::SaveState() const {
  return {
      {"searcher", "random"}, {"seed", std::to_string(seed_)}, {"draws", std::to_string(draws_)}};
}

Status RandomSearcher::RestoreState(const nlohmann::json& state) {
  TY_RETURN_IF_ERROR(CheckSearcherKind(state, "random"));
  TY_ASSIGN_OR_RETURN(uint64_t seed, ReadStateCounter(state, "seed"));
  TY_ASSIGN_OR_RETURN(uint64_t draws, ReadStateCounter(state, "draws"));
  seed_ = seed;
  draws_ = draws;
  return Status::Ok();
}

}  // namespace trainyard::tuning
