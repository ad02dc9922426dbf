#include "tuning/search_space.h"

#include <algorithm>
#include <cmath>

namespace trainyard::tuning {
namespace {

// The numeric interval a parameter is warped over.
void Bounds(const ParameterSpec& s, double* lo, double* hi) {
  switch (s.type) {
    case ParameterType::kDouble:
      *lo = s.min_value;
      *hi = s.max_value;
      return;
    case ParameterType::kInteger:
      *lo = static_cast<double>(s.int_min) - 0.5;
      *hi = static_cast<double>(s.int_max) + 0.5;
      return;
    case ParameterType::kDiscrete:
      *lo = s.discrete_values.front();
      *hi = s.discrete_values.back();
      return;
    case ParameterType::kCategorical:
      *lo = 0;
      *hi = 1;
      return;
  }
}

double NumericValue(const ParameterValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return 0;
}

}  // namespace

double WarpValue(const ParameterSpec& spec, double x) {
  double lo = 0, hi = 0;
  Bounds(spec, &lo, &hi);
  if (!(hi > lo)) return 0.5;
  x = std::clamp(x, lo, hi);
  double u = 0;
  switch (spec.scale_type) {
    case ScaleType::kUnspecified:
    case ScaleType::kLinear:
      u = (x - lo) / (hi - lo);
      break;
    case ScaleType::kLog:
      u = (std::log(x) - std::log(lo)) / (std::log(hi) - std::log(lo));
      break;
    case ScaleType::kReverseLog:
      u = 1.0 - (std::log(hi + lo - x) - std::log(lo)) / (std::log(hi) - std::log(lo));
      break;
  }
  return std::clamp(u, 0.0, 1.0);
}

double UnwarpValue(const ParameterSpec& spec, double u) {
  double lo = 0, hi = 0;
  Bounds(spec, &lo, &hi);
  u = std::clamp(u, 0.0, 1.0);
  if (!(hi > lo)) return lo;
  double x = lo;
  switch (spec.scale_type) {
    case ScaleType::kUnspecified:
    case ScaleType::kLinear:
      x = lo + u * (hi - lo);
      break;
    case ScaleType::kLog:
      x = std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
      break;
    case ScaleType::kReverseLog:
      x = hi + lo - std::exp(std::log(lo) + (1.0 - u) * (std::log(hi) - std::log(lo)));
      break;
  }
  return std::clamp(x, lo, hi);
}

SearchSpace::SearchSpace(const StudySpec& spec) {
  for (const ParameterSpec& p : spec.parameters) Add(p, -1, nullptr);
}

void SearchSpace::Add(const ParameterSpec& spec, int parent,
                      const ConditionalParameterSpec* condition) {
  SpaceNode node;
  node.spec = spec;
  node.spec.conditional_parameter_specs.clear();
  node.parent = parent;
  if (condition) {
    node.parent_discrete_values = condition->parent_discrete_values;
    node.parent_int_values = condition->parent_int_values;
    node.parent_categorical_values = condition->parent_categorical_values;
  }
  node.feature_offset = feature_dim_;
  node.feature_width = spec.type == ParameterType::kCategorical
                           ? static_cast<int>(spec.categorical_values.size())
                           : 1;
  feature_dim_ += node.feature_width;
  const int index = static_cast<int>(nodes_.size());
  nodes_.push_back(std::move(node));
  for (const ConditionalParameterSpec& c : spec.conditional_parameter_specs) {
    Add(c.parameter_spec, index, &c);
  }
}

bool SearchSpace::IsActive(int i, const std::vector<const ParameterValue*>& values) const {
  const SpaceNode& n = nodes_[i];
  if (n.parent < 0) return true;
  const ParameterValue* pv = values[n.parent];
  if (pv == nullptr) return false;
  if (const auto* s = std::get_if<std::string>(pv)) {
    return std::find(n.parent_categorical_values.begin(), n.parent_categorical_values.end(), *s) !=
           n.parent_categorical_values.end();
  }
  if (const auto* iv = std::get_if<int64_t>(pv)) {
    return std::find(n.parent_int_values.begin(), n.parent_int_values.end(), *iv) !=
           n.parent_int_values.end();
  }
  double d = std::get<double>(*pv);
  return std::any_of(n.parent_discrete_values.begin(), n.parent_discrete_values.end(),
                     [&](double v) { return std::fabs(v - d) <= 1e-12 * (1 + std::fabs(v)); });
}

ParameterSet SearchSpace::Sample(Rng& rng) const {
  ParameterSet out;
  std::vector<ParameterValue> values(nodes_.size());
  std::vector<const ParameterValue*> ptrs(nodes_.size(), nullptr);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!IsActive(static_cast<int>(i), ptrs)) continue;
    const ParameterSpec& s = nodes_[i].spec;
    switch (s.type) {
      case ParameterType::kDouble:
        values[i] = UnwarpValue(s, rng.Uniform());
        break;
      case ParameterType::kInteger: {
        double x = std::round(UnwarpValue(s, rng.Uniform()));
        values[i] = std::clamp(static_cast<int64_t>(x), s.int_min, s.int_max);
        break;
      }
      case ParameterType::kDiscrete:
        values[i] = s.discrete_values[rng.UniformInt(s.discrete_values.size())];
        break;
      case ParameterType::kCategorical:
        values[i] = s.categorical_values[rng.UniformInt(s.categorical_values.size())];
        break;
    }
    ptrs[i] = &values[i];
    out.push_back({s.parameter_id, values[i]});
  }
  return out;
}

std::vector<const ParameterValue*> SearchSpace::Lookup(const ParameterSet& set) const {
  std::vector<const ParameterValue*> ptrs(nodes_.size(), nullptr);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    ptrs[i] = FindParameter(set, nodes_[i].spec.parameter_id);
  }
  return ptrs;
}

Eigen::VectorXd SearchSpace::Encode(const ParameterSet& set) const {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(feature_dim_);
  std::vector<const ParameterValue*> ptrs = Lookup(set);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const ParameterValue* v = ptrs[i];
    if (v == nullptr) continue;
    const SpaceNode& n = nodes_[i];
    if (n.spec.type == ParameterType::kCategorical) {
      const auto& cats = n.spec.categorical_values;
      const std::string* s = std::get_if<std::string>(v);
      auto it = s ? std::find(cats.begin(), cats.end(), *s) : cats.end();
      if (it != cats.end()) x[n.feature_offset + (it - cats.begin())] = 1.0;
    } else {
      x[n.feature_offset] = WarpValue(n.spec, NumericValue(*v));
    }
  }
  return x;
}

ParameterSet SearchSpace::Decode(const Eigen::VectorXd& x) const {
  ParameterSet out;
  std::vector<ParameterValue> values(nodes_.size());
  std::vector<const ParameterValue*> ptrs(nodes_.size(), nullptr);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!IsActive(static_cast<int>(i), ptrs)) continue;
    const SpaceNode& n = nodes_[i];
    const ParameterSpec& s = n.spec;
    const double u = x[n.feature_offset];
    switch (s.type) {
      case ParameterType::kDouble:
        values[i] = UnwarpValue(s, u);
        break;
      case ParameterType::kInteger: {
        double v = std::round(UnwarpValue(s, u));
        values[i] = std::clamp(static_cast<int64_t>(v), s.int_min, s.int_max);
        break;
      }
      case ParameterType::kDiscrete: {
        size_t best = 0;
        double best_d = 1e300;
        for (size_t k = 0; k < s.discrete_values.size(); ++k) {
          double d = std::fabs(WarpValue(s, s.discrete_values[k]) - u);
          if (d < best_d) {
            best_d = d;
            best = k;
          }
        }
        values[i] = s.discrete_values[best];
        break;
      }
      case ParameterType::kCategorical: {
        Eigen::Index best = 0;
        x.segment(n.feature_offset, n.feature_width).maxCoeff(&best);
        values[i] = s.categorical_values[static_cast<size_t>(best)];
        break;
      }
    }
    ptrs[i] = &values[i];
    out.push_back({s.parameter_id, values[i]});
  }
  return out;
}

std::vector<int> SearchSpace::NumericColumns(const ParameterSet& set) const {
  std::vector<int> cols;
  for (const SpaceNode& n : nodes_) {
    if (n.spec.type == ParameterType::kCategorical) continue;
    if (FindParameter(set, n.spec.parameter_id)) cols.push_back(n.feature_offset);
  }
  return cols;
}

std::string SearchSpace::Key(const ParameterSet& set) {
  std::string key;
  for (const TrialParameter& p : set) {
    key += p.parameter_id;
    key += '=';
    key += FormatParameterValue(p.value);
    key += ';';
  }
  return key;
}

}  // namespace trainyard::tuning
