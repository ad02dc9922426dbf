#include "tuning/grid_searcher.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tuning/searcher_state.h"

namespace trainyard::tuning {
namespace {

constexpr uint64_t kSaturated = uint64_t{1} << 62;

uint64_t SatMul(uint64_t a, uint64_t b) {
  unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return p > kSaturated ? kSaturated : static_cast<uint64_t>(p);
}
uint64_t SatAdd(uint64_t a, uint64_t b) { return a + b > kSaturated ? kSaturated : a + b; }

bool Activates(const SpaceNode& child, const ParameterValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    for (const std::string& c : child.parent_categorical_values) {
      if (c == *s) return true;
    }
    return false;
  }
  if (const auto* i = std::get_if<int64_t>(&v)) {
    for (int64_t c : child.parent_int_values) {
      if (c == *i) return true;
    }
    return false;
  }
  double d = std::get<double>(v);
  for (double c : child.parent_discrete_values) {
    if (std::fabs(c - d) <= 1e-12 * (1 + std::fabs(c))) return true;
  }
  return false;
}

}  // namespace

GridSearcher::GridSearcher(const StudySpec& spec) : space_(spec) {
  const auto& nodes = space_.nodes();
  values_.resize(nodes.size());
  kids_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ParameterSpec& s = nodes[i].spec;
    std::vector<ParameterValue>& vals = values_[i];
    switch (s.type) {
      case ParameterType::kDouble: {
        // Validated: grid_step is set. The 1e-9 slack keeps max_value when the step divides the
        // range up to rounding (0.1 * 10 != 1.0 exactly).
        const double step = s.grid_step.value_or(s.max_value - s.min_value);
        const int64_t n =
            static_cast<int64_t>(std::floor((s.max_value - s.min_value) / step + 1e-9));
        for (int64_t k = 0; k <= n; ++k) {
          // Rounded to 12 significant digits so a trial gets --lr=0.3, not 0.30000000000000004.
          char buf[32];
          std::snprintf(buf, sizeof(buf), "%.12g", s.min_value + static_cast<double>(k) * step);
          vals.emplace_back(std::min(s.max_value, std::strtod(buf, nullptr)));
        }
        break;
      }
      case ParameterType::kInteger:
        for (int64_t v = s.int_min; v <= s.int_max; ++v) vals.emplace_back(v);
        break;
      case ParameterType::kDiscrete:
        for (double v : s.discrete_values) vals.emplace_back(v);
        break;
      case ParameterType::kCategorical:
        for (const std::string& v : s.categorical_values) vals.emplace_back(v);
        break;
    }
    kids_[i].resize(vals.size());
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int parent = nodes[i].parent;
    if (parent < 0) {
      top_.push_back(static_cast<int>(i));
      continue;
    }
    for (size_t k = 0; k < values_[parent].size(); ++k) {
      if (Activates(nodes[i], values_[parent][k])) kids_[parent][k].push_back(static_cast<int>(i));
    }
  }
  size_ = CountList(top_);
}

uint64_t GridSearcher::CountNode(int node) const {
  uint64_t total = 0;
  for (const std::vector<int>& kids : kids_[node]) total = SatAdd(total, CountList(kids));
  return total;
}

uint64_t GridSearcher::CountList(const std::vector<int>& list) const {
  uint64_t total = 1;
  for (int node : list) total = SatMul(total, CountNode(node));
  return total;
}

void GridSearcher::Emit(const std::vector<int>& list, uint64_t index, ParameterSet* out) const {
  std::vector<uint64_t> counts;
  for (int node : list) counts.push_back(CountNode(node));
  for (size_t j = 0; j < list.size(); ++j) {
    uint64_t stride = 1;
    for (size_t k = j + 1; k < list.size(); ++k) stride = SatMul(stride, counts[k]);
    uint64_t idx = index / stride;
    index %= stride;
    const int node = list[j];
    for (size_t v = 0; v < values_[node].size(); ++v) {
      const uint64_t sub = CountList(kids_[node][v]);
      if (idx < sub) {
        out->push_back({space_.nodes()[node].spec.parameter_id, values_[node][v]});
        Emit(kids_[node][v], idx, out);
        break;
      }
      idx -= sub;
    }
  }
}

ParameterSet GridSearcher::PointAt(uint64_t index) const {
  ParameterSet out;
  Emit(top_, index, &out);
  return out;
}

StatusOr<Suggestions> GridSearcher::Suggest(int count, const SearchHistory& history) {
  Suggestions s;
  while (static_cast<int>(s.parameter_sets.size()) < count && next_ < size_) {
    s.parameter_sets.push_back(PointAt(next_++));
  }
  s.exhausted = next_ >= size_;
  return s;
}

nlohmann::json GridSearcher::SaveState() const {
  return {{"searcher", "grid"},
          {"nextIndex", std::to_string(next_)},
          {"gridSize", std::to_string(size_)}};
}

Status GridSearcher::RestoreState(const nlohmann::json& state) {
  TY_RETURN_IF_ERROR(CheckSearcherKind(state, "grid"));
  TY_ASSIGN_OR_RETURN(uint64_t saved_size, ReadStateCounter(state, "gridSize"));
  TY_ASSIGN_OR_RETURN(uint64_t next, ReadStateCounter(state, "nextIndex"));
  if (saved_size != size_) {
    return InvalidArgumentError("searcherState.gridSize: the saved grid has " +
                                std::to_string(saved_size) + " points but the spec gives " +
                                std::to_string(size_) + "; the study spec changed");
  }
  next_ = next;
  return Status::Ok();
}

}  // namespace trainyard::tuning
