#include "tuning/study_spec_json.h"

#include "protojson/reader.h"
#include "protojson/writer.h"

namespace trainyard::tuning {
namespace {

using nlohmann::json;
using protojson::EnumEntry;
using protojson::EnumType;
using protojson::FieldError;
using protojson::InvalidValueError;
using protojson::ReadDouble;
using protojson::ReadInt64;
using protojson::ReadString;
using Fields = protojson::ObjectReader;

// Enum numbers are those of google/cloud/aiplatform/v1/study.proto.
constexpr EnumEntry<Goal> kGoalEntries[] = {{"MAXIMIZE", 1, Goal::kMaximize},
                                            {"MINIMIZE", 2, Goal::kMinimize}};
constexpr EnumType<Goal> kGoal = {"google.cloud.aiplatform.v1.StudySpec.MetricSpec.GoalType",
                                  kGoalEntries};
constexpr EnumEntry<ScaleType> kScaleEntries[] = {
    {"SCALE_TYPE_UNSPECIFIED", 0, ScaleType::kUnspecified},
    {"UNIT_LINEAR_SCALE", 1, ScaleType::kLinear},
    {"UNIT_LOG_SCALE", 2, ScaleType::kLog},
    {"UNIT_REVERSE_LOG_SCALE", 3, ScaleType::kReverseLog}};
constexpr EnumType<ScaleType> kScale = {
    "google.cloud.aiplatform.v1.StudySpec.ParameterSpec.ScaleType", kScaleEntries};
constexpr EnumEntry<Algorithm> kAlgorithmEntries[] = {
    {"ALGORITHM_UNSPECIFIED", 0, Algorithm::kUnspecified},
    {"GRID_SEARCH", 2, Algorithm::kGridSearch},
    {"RANDOM_SEARCH", 3, Algorithm::kRandomSearch}};
constexpr EnumType<Algorithm> kAlgorithm = {"google.cloud.aiplatform.v1.StudySpec.Algorithm",
                                            kAlgorithmEntries};
constexpr EnumEntry<MeasurementSelection> kSelectionEntries[] = {
    {"MEASUREMENT_SELECTION_TYPE_UNSPECIFIED", 0, MeasurementSelection::kUnspecified},
    {"LAST_MEASUREMENT", 1, MeasurementSelection::kLast},
    {"BEST_MEASUREMENT", 2, MeasurementSelection::kBest}};
constexpr EnumType<MeasurementSelection> kSelection = {
    "google.cloud.aiplatform.v1.StudySpec.MeasurementSelectionType", kSelectionEntries};
constexpr EnumEntry<TrialState> kTrialStateEntries[] = {
    {"STATE_UNSPECIFIED", 0, TrialState::kUnspecified},
    {"REQUESTED", 1, TrialState::kRequested},
    {"ACTIVE", 2, TrialState::kActive},
    {"STOPPING", 3, TrialState::kStopping},
    {"SUCCEEDED", 4, TrialState::kSucceeded},
    {"INFEASIBLE", 5, TrialState::kInfeasible}};
constexpr EnumType<TrialState> kTrialState = {"google.cloud.aiplatform.v1.Trial.State",
                                              kTrialStateEntries};

StatusOr<MetricSpec> ParseMetric(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"metricId", "goal"}, {"safetyConfig"}));
  MetricSpec m;
  TY_RETURN_IF_ERROR(f.String("metricId", &m.metric_id));
  TY_RETURN_IF_ERROR(f.Require("goal", "use MAXIMIZE or MINIMIZE"));
  TY_RETURN_IF_ERROR(f.Enum("goal", kGoal, &m.goal));
  return m;
}

// The value spec of one parameter type ("doubleValueSpec", ...) into `p`.
Status ParseValueSpec(const Fields& f, std::string_view name, ParameterSpec* p) {
  const json* v = f.Get(name);
  const bool bounded = name == "doubleValueSpec" || name == "integerValueSpec";
  TY_ASSIGN_OR_RETURN(Fields g,
                      bounded ? Fields::Open(*v, f.PathOf(name),
                                             {"minValue", "maxValue", "defaultValue", "gridStep"})
                              : Fields::Open(*v, f.PathOf(name), {"values", "defaultValue"}));
  if (name == "integerValueSpec" && g.Has("gridStep")) {
    return protojson::UnknownFieldError(g.where(), "gridStep");
  }
  if (bounded) {
    TY_RETURN_IF_ERROR(g.Require("minValue"));
    TY_RETURN_IF_ERROR(g.Require("maxValue"));
  }
  if (name == "doubleValueSpec") {
    p->type = ParameterType::kDouble;
    TY_RETURN_IF_ERROR(g.Double("minValue", &p->min_value));
    TY_RETURN_IF_ERROR(g.Double("maxValue", &p->max_value));
    if (g.Has("gridStep")) {
      double step = 0;
      TY_RETURN_IF_ERROR(g.Double("gridStep", &step));
      p->grid_step = step;
    }
  } else if (name == "integerValueSpec") {
    p->type = ParameterType::kInteger;
    TY_RETURN_IF_ERROR(g.Int64("minValue", &p->int_min));
    TY_RETURN_IF_ERROR(g.Int64("maxValue", &p->int_max));
  } else if (name == "categoricalValueSpec") {
    p->type = ParameterType::kCategorical;
    TY_RETURN_IF_ERROR(g.Strings("values", &p->categorical_values));
  } else {
    p->type = ParameterType::kDiscrete;
    TY_RETURN_IF_ERROR(g.Repeated("values", &p->discrete_values, ReadDouble));
  }
  if (const json* d = g.Get("defaultValue")) p->default_value = *d;
  return Status::Ok();
}

// The `values` list inside parentDiscreteValues / parentIntValues / parentCategoricalValues.
template <typename T, typename F>
Status ParseParentValues(const Fields& f, std::string_view name, std::vector<T>* out, F read_one,
                         int* parents) {
  const json* v = f.Get(name);
  if (!v) return Status::Ok();
  ++*parents;
  TY_ASSIGN_OR_RETURN(Fields g, Fields::Open(*v, f.PathOf(name), {"values"}));
  TY_RETURN_IF_ERROR(g.Require("values"));
  return g.Repeated("values", out, read_one);
}

StatusOr<ConditionalParameterSpec> ParseConditional(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"parameterSpec", "parentDiscreteValues",
                                              "parentIntValues", "parentCategoricalValues"}));
  ConditionalParameterSpec c;
  int parents = 0;
  TY_RETURN_IF_ERROR(ParseParentValues(f, "parentDiscreteValues", &c.parent_discrete_values,
                                       ReadDouble, &parents));
  TY_RETURN_IF_ERROR(
      ParseParentValues(f, "parentIntValues", &c.parent_int_values, ReadInt64, &parents));
  TY_RETURN_IF_ERROR(ParseParentValues(f, "parentCategoricalValues", &c.parent_categorical_values,
                                       ReadString, &parents));
  if (parents != 1) {
    return FieldError(path,
                      "give exactly one of parentDiscreteValues, parentIntValues, "
                      "parentCategoricalValues");
  }
  TY_RETURN_IF_ERROR(f.Require("parameterSpec"));
  TY_ASSIGN_OR_RETURN(c.parameter_spec,
                      ParseParameterSpec(*f.Get("parameterSpec"), f.PathOf("parameterSpec")));
  return c;
}

// The oneof automatedStoppingSpec of a StudySpec.
Status ParseStopping(const Fields& f, StudySpec* s) {
  TY_RETURN_IF_ERROR(f.RejectIfSet("convexAutomatedStoppingSpec",
                                   "use medianAutomatedStoppingSpec or decayCurveStoppingSpec"));
  if (f.Has("medianAutomatedStoppingSpec") && f.Has("decayCurveStoppingSpec")) {
    return FieldError(f.where(),
                      "give at most one of medianAutomatedStoppingSpec, decayCurveStoppingSpec");
  }
  for (std::string_view name : {"medianAutomatedStoppingSpec", "decayCurveStoppingSpec"}) {
    const json* v = f.Get(name);
    if (!v) continue;
    TY_ASSIGN_OR_RETURN(Fields g, Fields::Open(*v, f.PathOf(name), {"useElapsedDuration"}));
    bool use_elapsed = false;
    TY_RETURN_IF_ERROR(g.Bool("useElapsedDuration", &use_elapsed));
    if (name == "medianAutomatedStoppingSpec") {
      s->automated_stopping = MedianStoppingSpec{use_elapsed};
    } else {
      s->automated_stopping = DecayCurveStoppingSpec{use_elapsed};
    }
  }
  return Status::Ok();
}

StatusOr<MetricValue> ParseMetricValue(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"metricId", "value"}));
  MetricValue mv;
  TY_RETURN_IF_ERROR(f.String("metricId", &mv.metric_id));
  TY_RETURN_IF_ERROR(f.Double("value", &mv.value));
  return mv;
}

StatusOr<TrialParameter> ParseTrialParameter(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"parameterId", "value"}));
  TrialParameter tp;
  TY_RETURN_IF_ERROR(f.Require("parameterId"));
  TY_RETURN_IF_ERROR(f.Require("value"));
  TY_RETURN_IF_ERROR(f.String("parameterId", &tp.parameter_id));
  TY_ASSIGN_OR_RETURN(tp.value, ParseParameterValue(*f.Get("value"), f.PathOf("value")));
  return tp;
}

}  // namespace

const protojson::EnumType<Goal>& GoalEnum() { return kGoal; }
const protojson::EnumType<ScaleType>& ScaleTypeEnum() { return kScale; }
const protojson::EnumType<Algorithm>& AlgorithmEnum() { return kAlgorithm; }
const protojson::EnumType<MeasurementSelection>& MeasurementSelectionEnum() { return kSelection; }
const protojson::EnumType<TrialState>& TrialStateEnum() { return kTrialState; }

StatusOr<ParameterSpec> ParseParameterSpec(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"parameterId", "doubleValueSpec", "integerValueSpec",
                                              "categoricalValueSpec", "discreteValueSpec",
                                              "scaleType", "conditionalParameterSpecs"}));
  ParameterSpec p;
  TY_RETURN_IF_ERROR(f.String("parameterId", &p.parameter_id));
  int specs = 0;
  for (std::string_view name :
       {"doubleValueSpec", "integerValueSpec", "categoricalValueSpec", "discreteValueSpec"}) {
    if (!f.Has(name)) continue;
    ++specs;
    TY_RETURN_IF_ERROR(ParseValueSpec(f, name, &p));
  }
  if (specs != 1) {
    return FieldError(path,
                      "give exactly one of doubleValueSpec, integerValueSpec, "
                      "categoricalValueSpec, discreteValueSpec (got " +
                          std::to_string(specs) + ")");
  }
  TY_RETURN_IF_ERROR(f.Enum("scaleType", kScale, &p.scale_type));
  TY_RETURN_IF_ERROR(
      f.Repeated("conditionalParameterSpecs", &p.conditional_parameter_specs, ParseConditional));
  return p;
}

StatusOr<StudySpec> ParseStudySpec(const json& j, const std::string& path) {
  // observationNoise and studyStoppingConfig are Vizier-only on Vertex: accepted and ignored.
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Open(j, path,
                             {"metrics", "parameters", "algorithm", "measurementSelectionType",
                              "medianAutomatedStoppingSpec", "decayCurveStoppingSpec",
                              "convexAutomatedStoppingSpec"},
                             {"observationNoise", "studyStoppingConfig"}, "studySpec"));
  StudySpec s;
  TY_RETURN_IF_ERROR(f.Repeated("metrics", &s.metrics, ParseMetric));
  TY_RETURN_IF_ERROR(f.Repeated("parameters", &s.parameters, ParseParameterSpec));
  TY_RETURN_IF_ERROR(f.Enum("algorithm", kAlgorithm, &s.algorithm));
  TY_RETURN_IF_ERROR(f.Enum("measurementSelectionType", kSelection, &s.measurement_selection));
  TY_RETURN_IF_ERROR(ParseStopping(f, &s));
  return s;
}

StatusOr<HyperparameterTuningJobSpec> ParseHyperparameterTuningJobSpec(const json& j) {
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Open(j, "",
                             {"displayName", "studySpec", "maxTrialCount", "parallelTrialCount",
                              "maxFailedTrialCount", "trialJobSpec"},
                             {"name", "trials", "state", "createTime", "startTime", "endTime",
                              "updateTime", "error", "labels", "encryptionSpec", "trainyardInfo"},
                             "hyperparameterTuningJob"));
  HyperparameterTuningJobSpec s;
  TY_RETURN_IF_ERROR(f.String("displayName", &s.display_name));
  TY_RETURN_IF_ERROR(f.Require("studySpec"));
  TY_ASSIGN_OR_RETURN(s.study_spec, ParseStudySpec(*f.Get("studySpec"), "studySpec"));
  TY_RETURN_IF_ERROR(f.Int32("maxTrialCount", &s.max_trial_count));
  TY_RETURN_IF_ERROR(f.Int32("parallelTrialCount", &s.parallel_trial_count));
  TY_RETURN_IF_ERROR(f.Int32("maxFailedTrialCount", &s.max_failed_trial_count));
  if (const json* v = f.Get("trialJobSpec")) {
    // Decoded by spec::CustomJobSpecFromJson where the job is created; opaque here.
    if (!v->is_object()) {
      return InvalidValueError("trialJobSpec", "google.cloud.aiplatform.v1.CustomJobSpec", *v,
                               "expected a JSON object");
    }
    s.trial_job_spec = *v;
  }
  return s;
}

StatusOr<ParameterValue> ParseParameterValue(const json& j, const std::string& path) {
  if (j.is_string()) return ParameterValue(j.get<std::string>());
  if (j.is_number_integer()) return ParameterValue(j.get<int64_t>());
  if (j.is_number_float()) return ParameterValue(j.get<double>());
  return InvalidValueError(path, "google.protobuf.Value", j, "expected a number or a string");
}

StatusOr<Measurement> ParseMeasurement(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"elapsedDuration", "stepCount", "metrics"}));
  Measurement m;
  std::optional<Duration> elapsed;
  TY_RETURN_IF_ERROR(f.Duration("elapsedDuration", &elapsed));
  if (elapsed && elapsed->count() < 0) {
    return InvalidValueError(f.PathOf("elapsedDuration"), "google.protobuf.Duration",
                             *f.Get("elapsedDuration"), "must not be negative");
  }
  if (elapsed) m.elapsed_seconds = DurationToSeconds(*elapsed);
  TY_RETURN_IF_ERROR(f.Int64("stepCount", &m.step_count));
  TY_RETURN_IF_ERROR(f.Repeated("metrics", &m.metrics, ParseMetricValue));
  return m;
}

StatusOr<TrialState> ParseTrialState(std::string_view name, const std::string& path) {
  return protojson::ReadEnum(json(name), path, kTrialState);
}

StatusOr<Trial> ParseTrial(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f,
                      Fields::Open(j, path,
                                   {"id", "state", "parameters", "finalMeasurement", "measurements",
                                    "startTime", "endTime", "infeasibleReason", "customJob",
                                    "earlyStopped", "jobFailed", "stopReason"},
                                   {"name", "clientId", "webAccessUris"}));
  Trial t;
  TY_RETURN_IF_ERROR(f.String("id", &t.id));
  TY_RETURN_IF_ERROR(f.Enum("state", kTrialState, &t.state));
  TY_RETURN_IF_ERROR(f.Repeated("parameters", &t.parameters, ParseTrialParameter));
  TY_RETURN_IF_ERROR(f.Message("finalMeasurement", &t.final_measurement, ParseMeasurement));
  TY_RETURN_IF_ERROR(f.Repeated("measurements", &t.measurements, ParseMeasurement));
  TY_RETURN_IF_ERROR(f.Timestamp("startTime", &t.start_time));
  TY_RETURN_IF_ERROR(f.Timestamp("endTime", &t.end_time));
  TY_RETURN_IF_ERROR(f.String("infeasibleReason", &t.infeasible_reason));
  TY_RETURN_IF_ERROR(f.String("customJob", &t.custom_job));
  TY_RETURN_IF_ERROR(f.Bool("earlyStopped", &t.early_stopped));
  TY_RETURN_IF_ERROR(f.String("stopReason", &t.stop_reason));
  TY_RETURN_IF_ERROR(f.Bool("jobFailed", &t.job_failed));
  return t;
}

json ToJson(const ParameterSpec& p) {
  json j;
  j["parameterId"] = p.parameter_id;
  switch (p.type) {
    case ParameterType::kDouble: {
      json s = {{"minValue", p.min_value}, {"maxValue", p.max_value}};
      if (p.grid_step) s["gridStep"] = *p.grid_step;
      if (p.default_value) s["defaultValue"] = *p.default_value;
      j["doubleValueSpec"] = s;
      break;
    }
    case ParameterType::kInteger: {
      json s = {{"minValue", protojson::Int64Value(p.int_min)},
                {"maxValue", protojson::Int64Value(p.int_max)}};
      if (p.default_value) s["defaultValue"] = *p.default_value;
      j["integerValueSpec"] = s;
      break;
    }
    case ParameterType::kCategorical: {
      json s = {{"values", p.categorical_values}};
      if (p.default_value) s["defaultValue"] = *p.default_value;
      j["categoricalValueSpec"] = s;
      break;
    }
    case ParameterType::kDiscrete: {
      json s = {{"values", p.discrete_values}};
      if (p.default_value) s["defaultValue"] = *p.default_value;
      j["discreteValueSpec"] = s;
      break;
    }
  }
  if (p.scale_type != ScaleType::kUnspecified) j["scaleType"] = ScaleTypeName(p.scale_type);
  if (!p.conditional_parameter_specs.empty()) {
    json cs = json::array();
    for (const ConditionalParameterSpec& c : p.conditional_parameter_specs) {
      json e;
      if (!c.parent_discrete_values.empty()) {
        e["parentDiscreteValues"] = {{"values", c.parent_discrete_values}};
      } else if (!c.parent_int_values.empty()) {
        json vals = json::array();
        for (int64_t v : c.parent_int_values) vals.push_back(protojson::Int64Value(v));
        e["parentIntValues"] = {{"values", vals}};
      } else {
        e["parentCategoricalValues"] = {{"values", c.parent_categorical_values}};
      }
      e["parameterSpec"] = ToJson(c.parameter_spec);
      cs.push_back(e);
    }
    j["conditionalParameterSpecs"] = cs;
  }
  return j;
}

json ToJson(const StudySpec& s) {
  json j;
  json metrics = json::array();
  for (const MetricSpec& m : s.metrics) {
    metrics.push_back({{"metricId", m.metric_id}, {"goal", GoalName(m.goal)}});
  }
  j["metrics"] = metrics;
  json params = json::array();
  for (const ParameterSpec& p : s.parameters) params.push_back(ToJson(p));
  j["parameters"] = params;
  j["algorithm"] = AlgorithmName(s.algorithm);
  if (s.measurement_selection != MeasurementSelection::kUnspecified) {
    j["measurementSelectionType"] = MeasurementSelectionName(s.measurement_selection);
  }
  if (const auto* m = std::get_if<MedianStoppingSpec>(&s.automated_stopping)) {
    j["medianAutomatedStoppingSpec"] = {{"useElapsedDuration", m->use_elapsed_duration}};
  } else if (const auto* d = std::get_if<DecayCurveStoppingSpec>(&s.automated_stopping)) {
    j["decayCurveStoppingSpec"] = {{"useElapsedDuration", d->use_elapsed_duration}};
  }
  return j;
}

json ToJson(const HyperparameterTuningJobSpec& s) {
  return {{"displayName", s.display_name},
          {"studySpec", ToJson(s.study_spec)},
          {"maxTrialCount", s.max_trial_count},
          {"parallelTrialCount", s.parallel_trial_count},
          {"maxFailedTrialCount", s.max_failed_trial_count},
          {"trialJobSpec", s.trial_job_spec}};
}

json ToJson(const ParameterValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  return std::get<double>(value);
}

json ToJson(const Measurement& m) {
  json j;
  if (m.elapsed_seconds)
    j["elapsedDuration"] = protojson::DurationValue(DurationFromSeconds(*m.elapsed_seconds));
  j["stepCount"] = protojson::Int64Value(m.step_count);
  json metrics = json::array();
  for (const MetricValue& v : m.metrics) {
    metrics.push_back({{"metricId", v.metric_id}, {"value", v.value}});
  }
  j["metrics"] = metrics;
  return j;
}

json ToJson(const Trial& t) {
  json j;
  j["id"] = t.id;
  j["state"] = TrialStateName(t.state);
  json params = json::array();
  for (const TrialParameter& p : t.parameters) {
    params.push_back({{"parameterId", p.parameter_id}, {"value", ToJson(p.value)}});
  }
  j["parameters"] = params;
  if (t.final_measurement) j["finalMeasurement"] = ToJson(*t.final_measurement);
  json ms = json::array();
  for (const Measurement& m : t.measurements) ms.push_back(ToJson(m));
  j["measurements"] = ms;
  if (t.start_time) j["startTime"] = protojson::TimestampValue(*t.start_time);
  if (t.end_time) j["endTime"] = protojson::TimestampValue(*t.end_time);
  if (!t.infeasible_reason.empty()) j["infeasibleReason"] = t.infeasible_reason;
  if (!t.custom_job.empty()) j["customJob"] = t.custom_job;
  if (t.early_stopped) j["earlyStopped"] = true;
  if (t.job_failed) j["jobFailed"] = true;
  if (!t.stop_reason.empty()) j["stopReason"] = t.stop_reason;
  return j;
}
}  // namespace trainyard::tuning
