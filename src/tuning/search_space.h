// SearchSpace: the parameters of a validated StudySpec flattened in depth-first order (a
// conditional child right after its parent), with the per-parameter maths every searcher shares:
// scale warping to [0, 1], sampling, and the feature encoding the Gaussian process sees.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "tuning/rng.h"
#include "tuning/study_spec.h"

namespace trainyard::tuning {

struct SpaceNode {
  ParameterSpec spec;  // conditional_parameter_specs cleared: children are nodes of their own
  int parent = -1;     // index of the parent node, -1 for top-level parameters
  // The parent values that activate this node (one kind, matching the parent's type).
  std::vector<double> parent_discrete_values;
  std::vector<int64_t> parent_int_values;
  std::vector<std::string> parent_categorical_values;
  int feature_offset = 0;  // first column in the encoding
  int feature_width = 1;   // 1, or the number of categories (one-hot)
};

// Maps a feasible numeric value to [0, 1] under the parameter's scale (linear when unspecified):
//   linear       u = (x - lo) / (hi - lo)
//   log          u = (ln x - ln lo) / (ln hi - ln lo)
//   reverse log  u = 1 - (ln(hi + lo - x) - ln lo) / (ln hi - ln lo)
// Reverse log is log warping mirrored, so values near the top are spread out (resolution there
// is higher), which is how Vertex describes UNIT_REVERSE_LOG_SCALE. Integers warp over
// [lo - 0.5, hi + 0.5] so that each integer gets an equal share of the warped interval.
double WarpValue(const ParameterSpec& spec, double x);
double UnwarpValue(const ParameterSpec& spec, double u);

class SearchSpace {
 public:
  // `spec` must have passed ValidateStudySpec.
  explicit SearchSpace(const StudySpec& spec);

  const std::vector<SpaceNode>& nodes() const { return nodes_; }
  // Columns of the encoding: one per numeric parameter, one per category.
  int FeatureDim() const { return feature_dim_; }

  // Whether node `i` is active given the values of the nodes before it (values[j] empty when
  // node j is inactive).
  bool IsActive(int i, const std::vector<const ParameterValue*>& values) const;

  // A uniform draw in warped space for DOUBLE and INTEGER (so log scales are honoured), uniform
  // over the listed values for DISCRETE and CATEGORICAL; inactive children are left out.
  ParameterSet Sample(Rng& rng) const;

  // Features in [0, 1]: warped value for DOUBLE / INTEGER / DISCRETE, one-hot for CATEGORICAL,
  // zeros for inactive parameters.
  Eigen::VectorXd Encode(const ParameterSet& set) const;
  // The feasible point nearest to `x`: integers rounded, discrete snapped to the closest listed
  // value (in warped space), categorical by the largest one-hot entry, values clamped to bounds.
  ParameterSet Decode(const Eigen::VectorXd& x) const;
  // The encoding columns of the active numeric (non-categorical) parameters of `set`: the ones a
  // local optimiser may move.
  std::vector<int> NumericColumns(const ParameterSet& set) const;

  // A canonical text of the set ("lr=0.01;units=32"), used to detect repeated points.
  static std::string Key(const ParameterSet& set);

 private:
  void Add(const ParameterSpec& spec, int parent, const ConditionalParameterSpec* condition);
  std::vector<const ParameterValue*> Lookup(const ParameterSet& set) const;

  std::vector<SpaceNode> nodes_;
  int feature_dim_ = 0;
};

}  // namespace trainyard::tuning
