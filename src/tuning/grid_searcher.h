// GridSearcher: every combination of the (discrete, categorical, integer, stepped double)
// parameter values, in a fixed order, each exactly once.
//
// Order: the first parameter varies slowest, values in their listed (or ascending) order; a
// conditional child expands in place for the parent values that activate it. The i-th point is
// computed from i directly (mixed radix with per-value subtree sizes), so the state is a single
// counter and a grid of 10^12 points costs nothing until it is walked.
#pragma once

#include <cstdint>

#include "tuning/search_space.h"
#include "tuning/searcher.h"

namespace trainyard::tuning {

class GridSearcher : public Searcher {
 public:
  // `spec` must be valid for GRID_SEARCH (every double has a gridStep).
  explicit GridSearcher(const StudySpec& spec);

  std::string_view Name() const override { return "grid"; }
  // Returns the next `count` grid points; fewer with exhausted=true at the end of the grid.
  // History is not consulted: points already issued are never repeated.
  StatusOr<Suggestions> Suggest(int count, const SearchHistory& history) override;
  nlohmann::json SaveState() const override;
  Status RestoreState(const nlohmann::json& state) override;

  // Number of points in the grid, saturated at 2^62.
  uint64_t Size() const { return size_; }
  // The index-th point (0 <= index < Size()).
  ParameterSet PointAt(uint64_t index) const;

 private:
  uint64_t CountList(const std::vector<int>& list) const;
  void Emit(const std::vector<int>& list, uint64_t index, ParameterSet* out) const;
  uint64_t CountNode(int node) const;

  SearchSpace space_;
  std::vector<int> top_;                             // top-level node indices
  std::vector<std::vector<std::vector<int>>> kids_;  // [node][value index] -> child nodes
  std::vector<std::vector<ParameterValue>> values_;  // [node] -> grid values
  uint64_t size_ = 0;
  uint64_t next_ = 0;
};

}  // namespace trainyard::tuning
