// StudySpec, Trial and HyperparameterTuningJob in Vertex AI's shape (GA `study.proto`,
// `hyperparameter_tuning_job.proto`; see shared/reference/vertex-and-peers.md §4).
//
// These are plain values. study_spec_json.h turns them to and from proto3 JSON (lowerCamelCase,
// int64 as strings, enums by name) and study_spec_validate.h checks them with field paths.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace trainyard::tuning {

enum class Goal { kMaximize, kMinimize };
enum class ScaleType { kUnspecified, kLinear, kLog, kReverseLog };
enum class ParameterType { kDouble, kInteger, kCategorical, kDiscrete };
// kUnspecified is Vertex's ALGORITHM_UNSPECIFIED: the default Bayesian optimisation (GP-EI).
enum class Algorithm { kUnspecified, kGridSearch, kRandomSearch };
// kUnspecified is treated as kLast (as Vertex does).
enum class MeasurementSelection { kUnspecified, kLast, kBest };

struct MetricSpec {
  std::string metric_id;
  Goal goal = Goal::kMaximize;
};

struct ConditionalParameterSpec;

// One search dimension. Exactly the fields of `type` are meaningful.
struct ParameterSpec {
  std::string parameter_id;
  ParameterType type = ParameterType::kDouble;
  // kDouble: [min_value, max_value].
  double min_value = 0;
  double max_value = 0;
  // kDouble only, trainyard extension `doubleValueSpec.gridStep`: GRID_SEARCH enumerates
  // min_value, min_value + step, ... <= max_value. Ignored by the other algorithms.
  std::optional<double> grid_step;
  // kInteger: [int_min, int_max], both inclusive.
  int64_t int_min = 0;
  int64_t int_max = 0;
  // kDiscrete: increasing values.
  std::vector<double> discrete_values;
  // kCategorical.
  std::vector<std::string> categorical_values;
  ScaleType scale_type = ScaleType::kUnspecified;
  // `defaultValue` of the value spec: accepted and kept for round trips, unused by HP tuning
  // (Vertex uses it only in Vizier).
  std::optional<nlohmann::json> default_value;
  std::vector<ConditionalParameterSpec> conditional_parameter_specs;
};

// A child parameter that exists only when its parent takes one of the listed values. Exactly one
// of the parent_* lists is used, matching the parent's type (discrete / integer / categorical).
struct ConditionalParameterSpec {
  std::vector<double> parent_discrete_values;
  std::vector<int64_t> parent_int_values;
  std::vector<std::string> parent_categorical_values;
  ParameterSpec parameter_spec;
};

struct MedianStoppingSpec {
  bool use_elapsed_duration = false;
};
struct DecayCurveStoppingSpec {
  bool use_elapsed_duration = false;
};
using AutomatedStoppingSpec =
    std::variant<std::monostate, MedianStoppingSpec, DecayCurveStoppingSpec>;

struct StudySpec {
  std::vector<MetricSpec> metrics;  // exactly one is supported (validated)
  std::vector<ParameterSpec> parameters;
  Algorithm algorithm = Algorithm::kUnspecified;
  MeasurementSelection measurement_selection = MeasurementSelection::kUnspecified;
  AutomatedStoppingSpec automated_stopping;
};

// The value of one parameter in a trial: double for DOUBLE and DISCRETE, int64 for INTEGER,
// string for CATEGORICAL. On the wire it is a google.protobuf.Value (number or string).
using ParameterValue = std::variant<double, int64_t, std::string>;

struct TrialParameter {
  std::string parameter_id;
  ParameterValue value;
  friend bool operator==(const TrialParameter&, const TrialParameter&) = default;
};
// The active parameters of one trial, in the depth-first order of the StudySpec.
using ParameterSet = std::vector<TrialParameter>;

struct MetricValue {
  std::string metric_id;
  double value = 0;
};

struct Measurement {
  std::optional<double> elapsed_seconds;  // `elapsedDuration` ("12.5s" on the wire)
  int64_t step_count = 0;
  std::vector<MetricValue> metrics;

  // The value of `metric_id`, if this measurement has it.
  std::optional<double> Metric(const std::string& metric_id) const;
};

// Vertex Trial.State. There is no FAILED state: a trial whose job failed ends INFEASIBLE with
// infeasible_reason set (as on Vertex, where the trial's CustomJob carries the failure).
enum class TrialState { kUnspecified, kRequested, kActive, kStopping, kSucceeded, kInfeasible };

struct Trial {
  std::string id;
  TrialState state = TrialState::kUnspecified;
  ParameterSet parameters;
  std::optional<Measurement> final_measurement;
  std::vector<Measurement> measurements;
  std::optional<std::chrono::system_clock::time_point> start_time;
  std::optional<std::chrono::system_clock::time_point> end_time;
  std::string infeasible_reason;
  std::string custom_job;  // resource name of the trial's CustomJob, set by the platform
  // Output-only trainyard extensions: the trial was stopped by the automated stopping rule; the
  // trial's job failed (as opposed to ending without a measurement).
  bool early_stopped = false;
  bool job_failed = false;
  std::string stop_reason;  // why the runner stopped it (early stopping, study failed/cancelled)
};

// The user-supplied part of a HyperparameterTuningJob.
struct HyperparameterTuningJobSpec {
  std::string display_name;
  StudySpec study_spec;
  int max_trial_count = 0;
  int parallel_trial_count = 0;
  int max_failed_trial_count = 0;  // 0: trainyard decides (see EffectiveMaxFailedTrialCount)
  nlohmann::json trial_job_spec = nlohmann::json::object();  // a CustomJobSpec, opaque here
};

// The failure budget actually applied: max_failed_trial_count when > 0; for 0 ("the service
// decides" on Vertex) min(max_trial_count, max(3, max_trial_count / 4)).
int EffectiveMaxFailedTrialCount(const HyperparameterTuningJobSpec& spec);

// "MAXIMIZE", "UNIT_LOG_SCALE", ... (the proto enum names).
std::string_view GoalName(Goal goal);
std::string_view ScaleTypeName(ScaleType scale);
std::string_view AlgorithmName(Algorithm algorithm);
std::string_view MeasurementSelectionName(MeasurementSelection selection);
std::string_view TrialStateName(TrialState state);

// "0.001", "32", "adam": the text a trial receives in `--name=value`. Doubles use the shortest
// representation that round-trips.
std::string FormatParameterValue(const ParameterValue& value);

// Looks a parameter up by id; nullptr if the set does not contain it.
const ParameterValue* FindParameter(const ParameterSet& set, const std::string& parameter_id);

}  // namespace trainyard::tuning
