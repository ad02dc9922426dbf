#include "tuning/study_spec.h"

#include <algorithm>
#include <charconv>

namespace trainyard::tuning {

std::optional<double> Measurement::Metric(const std::string& metric_id) const {
  for (const MetricValue& m : metrics) {
    if (m.metric_id == metric_id) return m.value;
  }
  return std::nullopt;
}

int EffectiveMaxFailedTrialCount(const HyperparameterTuningJobSpec& spec) {
  if (spec.max_failed_trial_count > 0) return spec.max_failed_trial_count;
  return std::max(1, std::min(spec.max_trial_count, std::max(3, spec.max_trial_count / 4)));
}

std::string_view GoalName(Goal goal) { return goal == Goal::kMaximize ? "MAXIMIZE" : "MINIMIZE"; }

std::string_view ScaleTypeName(ScaleType scale) {
  switch (scale) {
    case ScaleType::kUnspecified:
      return "SCALE_TYPE_UNSPECIFIED";
    case ScaleType::kLinear:
      return "UNIT_LINEAR_SCALE";
    case ScaleType::kLog:
      return "UNIT_LOG_SCALE";
    case ScaleType::kReverseLog:
      return "UNIT_REVERSE_LOG_SCALE";
  }
  return "SCALE_TYPE_UNSPECIFIED";
}

std::string_view AlgorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kUnspecified:
      return "ALGORITHM_UNSPECIFIED";
    case Algorithm::kGridSearch:
      return "GRID_SEARCH";
    case Algorithm::kRandomSearch:
      return "RANDOM_SEARCH";
  }
  return "ALGORITHM_UNSPECIFIED";
}

std::string_view MeasurementSelectionName(MeasurementSelection selection) {
  switch (selection) {
    case MeasurementSelection::kUnspecified:
      return "MEASUREMENT_SELECTION_TYPE_UNSPECIFIED";
    case MeasurementSelection::kLast:
      return "LAST_MEASUREMENT";
    case MeasurementSelection::kBest:
      return "BEST_MEASUREMENT";
  }
  return "MEASUREMENT_SELECTION_TYPE_UNSPECIFIED";
}

std::string_view TrialStateName(TrialState state) {
  switch (state) {
    case TrialState::kUnspecified:
      return "STATE_UNSPECIFIED";
    case TrialState::kRequested:
      return "REQUESTED";
    case TrialState::kActive:
      return "ACTIVE";
    case TrialState::kStopping:
      return "STOPPING";
    case TrialState::kSucceeded:
      return "SUCCEEDED";
    case TrialState::kInfeasible:
      return "INFEASIBLE";
  }
  return "STATE_UNSPECIFIED";
}

std::string FormatParameterValue(const ParameterValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), std::get<double>(value));
  return std::string(buf, res.ptr);
}

const ParameterValue* FindParameter(const ParameterSet& set, const std::string& parameter_id) {
  for (const TrialParameter& p : set) {
    if (p.parameter_id == parameter_id) return &p.value;
  }
  return nullptr;
}

}  // namespace trainyard::tuning
