#include "tuning/searcher.h"

#include "tuning/bayesian_searcher.h"
#include "tuning/grid_searcher.h"
#include "tuning/random_searcher.h"

namespace trainyard::tuning {

std::unique_ptr<Searcher> MakeSearcher(const StudySpec& spec, uint64_t seed) {
  switch (spec.algorithm) {
    case Algorithm::kGridSearch:
      return std::make_unique<GridSearcher>(spec);
    case Algorithm::kRandomSearch:
      return std::make_unique<RandomSearcher>(spec, seed);
    case Algorithm::kUnspecified:
      break;
  }
  return std::make_unique<BayesianSearcher>(spec, seed);
}

}  // namespace trainyard::tuning
