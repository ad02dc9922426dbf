// Searcher: proposes the parameter sets of new trials (STYLE.md §2: one small interface, three
// implementations — GridSearcher, RandomSearcher, BayesianSearcher).
//
// Determinism contract: given the same construction arguments (spec, seed), the same saved state
// and the same history, Suggest returns the same parameter sets on every build of trainyard. A
// study resumed after a server restart (RestoreState + the persisted trials) therefore continues
// exactly as it would have without the restart.
//
// Thread-safety: none; the StudyRunner owning a searcher serialises calls.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tuning/study_spec.h"

namespace trainyard::tuning {

// A finished trial as a searcher sees it. `objective` is the final value of the study metric in
// the metric's own sense (the searcher applies the goal); nullopt for infeasible/failed trials.
struct Observation {
  ParameterSet parameters;
  std::optional<double> objective;
};

struct SearchHistory {
  std::vector<Observation> completed;
  std::vector<ParameterSet> pending;  // trials started and not finished yet
};

struct Suggestions {
  std::vector<ParameterSet> parameter_sets;
  // True when the space has no unproposed points left (grid only); parameter_sets may then hold
  // fewer than requested.
  bool exhausted = false;
};

class Searcher {
 public:
  virtual ~Searcher() = default;

  // "grid", "random", "bayesian".
  virtual std::string_view Name() const = 0;

  // Proposes up to `count` (>= 1) new parameter sets, distinct from each other. Errors are
  // INTERNAL (numerical failure that could not be recovered) — the random fallback makes them
  // rare — or INVALID_ARGUMENT for a history that does not fit the space.
  virtual StatusOr<Suggestions> Suggest(int count, const SearchHistory& history) = 0;

  // The searcher's own state (counters, fitted hyperparameters), JSON for the study store.
  virtual nlohmann::json SaveState() const = 0;
  // INVALID_ARGUMENT when the JSON was not written by SaveState of the same kind of searcher.
  virtual Status RestoreState(const nlohmann::json& state) = 0;
};

// The searcher for spec.algorithm (ALGORITHM_UNSPECIFIED → Bayesian). `spec` must be valid.
std::unique_ptr<Searcher> MakeSearcher(const StudySpec& spec, uint64_t seed);

}  // namespace trainyard::tuning
