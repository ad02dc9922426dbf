#include "tuning/study_spec_json.h"

#include <charconv>
#include <cmath>
#include <ctime>
#include <initializer_list>
#include <limits>
#include <map>

namespace trainyard::tuning {
namespace {

using nlohmann::json;

std::string Describe(const json& j) {
  std::string s = j.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

Status TypeError(const std::string& path, std::string_view expected, const json& got) {
  return InvalidArgumentError(path + ": expected " + std::string(expected) + ", got " +
                              Describe(got));
}

// "parent_int_values" -> "parentIntValues" (proto3 JSON accepts both spellings).
std::string ToCamel(std::string_view name) {
  std::string out;
  bool upper = false;
  for (char c : name) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

// The fields of one JSON object, keyed by camelCase name. Refuses non-objects, unknown fields and
// a field given twice (once per spelling). Fields in `ignored` are accepted and skipped.
class Fields {
 public:
  static StatusOr<Fields> Read(const json& j, const std::string& path,
                               std::initializer_list<std::string_view> known,
                               std::initializer_list<std::string_view> ignored = {}) {
    if (!j.is_object()) return TypeError(path.empty() ? "(body)" : path, "an object", j);
    Fields f;
    f.path_ = path;
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string name = ToCamel(it.key());
      bool is_known = std::find(known.begin(), known.end(), name) != known.end();
      bool is_ignored = std::find(ignored.begin(), ignored.end(), name) != ignored.end();
      if (!is_known && !is_ignored) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return InvalidArgumentError(f.Path(it.key()) + ": unknown field; known fields: " + list);
      }
      if (is_ignored || it->is_null()) continue;
      if (!f.values_.emplace(name, &*it).second) {
        return InvalidArgumentError(f.Path(name) + ": given twice (camelCase and snake_case)");
      }
    }
    return f;
  }

  const json* Get(std::string_view name) const {
    auto it = values_.find(std::string(name));
    return it == values_.end() ? nullptr : it->second;
  }
  std::string Path(std::string_view name) const {
    return path_.empty() ? std::string(name) : path_ + "." + std::string(name);
  }

 private:
  std::string path_;
  std::map<std::string, const json*> values_;
};

StatusOr<std::string> ReadString(const json& j, const std::string& path) {
  if (!j.is_string()) return TypeError(path, "a string", j);
  return j.get<std::string>();
}

StatusOr<double> ReadDouble(const json& j, const std::string& path) {
  if (j.is_number()) return j.get<double>();
  // proto3 JSON also allows "NaN", "Infinity" and numbers as strings; only numeric strings make
  // sense here (validation refuses non-finite bounds anyway).
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    double v = 0;
    auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (res.ec == std::errc() && res.ptr == s.data() + s.size() && !s.empty()) return v;
  }
  return TypeError(path, "a number", j);
}

StatusOr<int64_t> ReadInt64(const json& j, const std::string& path) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
      return static_cast<int64_t>(d);
    }
    return TypeError(path, "an integer", j);
  }
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    int64_t v = 0;
    auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (res.ec == std::errc() && res.ptr == s.data() + s.size() && !s.empty()) return v;
  }
  return TypeError(path, "an integer (a JSON number or a decimal string)", j);
}

StatusOr<int> ReadInt32(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(int64_t v, ReadInt64(j, path));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError(path + ": " + std::to_string(v) + " does not fit in int32");
  }
  return static_cast<int>(v);
}

StatusOr<bool> ReadBool(const json& j, const std::string& path) {
  if (!j.is_boolean()) return TypeError(path, "true or false", j);
  return j.get<bool>();
}

template <typename T, typename F>
StatusOr<std::vector<T>> ReadArray(const json& j, const std::string& path, F read_one) {
  if (!j.is_array()) return TypeError(path, "an array", j);
  std::vector<T> out;
  for (size_t i = 0; i < j.size(); ++i) {
    TY_ASSIGN_OR_RETURN(T v, read_one(j[i], path + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(v));
  }
  return out;
}

template <typename E>
StatusOr<E> ReadEnum(const json& j, const std::string& path,
                     std::initializer_list<std::pair<std::string_view, E>> names) {
  std::string list;
  for (const auto& [n, e] : names) list += (list.empty() ? "" : ", ") + std::string(n);
  if (j.is_string()) {
    for (const auto& [n, e] : names) {
      if (j.get_ref<const std::string&>() == n) return e;
    }
  }
  return InvalidArgumentError(path + ": expected one of " + list + ", got " + Describe(j));
}

// Duration as proto3 JSON: "12.5s".
StatusOr<double> ReadDurationSeconds(const json& j, const std::string& path) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s.size() >= 2 && s.back() == 's') {
      double v = 0;
      auto res = std::from_chars(s.data(), s.data() + s.size() - 1, v);
      if (res.ec == std::errc() && res.ptr == s.data() + s.size() - 1 && v >= 0) return v;
    }
  }
  return TypeError(path, "a duration such as \"12.5s\"", j);
}

std::string FormatDuration(double seconds) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), seconds, std::chars_format::fixed, 6);
  std::string s(buf, res.ptr);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + "s";
}

json Int64Json(int64_t v) { return std::to_string(v); }  // proto3 JSON writes int64 as a string

StatusOr<std::vector<ConditionalParameterSpec>> ParseConditionals(const json& j,
                                                                  const std::string& path);

StatusOr<MetricSpec> ParseMetric(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Read(j, path, {"metricId", "goal"}, {"safetyConfig"}));
  MetricSpec m;
  if (const json* v = f.Get("metricId")) {
    TY_ASSIGN_OR_RETURN(m.metric_id, ReadString(*v, f.Path("metricId")));
  }
  if (const json* v = f.Get("goal")) {
    TY_ASSIGN_OR_RETURN(
        m.goal, ReadEnum<Goal>(*v, f.Path("goal"),
                               {{"MAXIMIZE", Goal::kMaximize}, {"MINIMIZE", Goal::kMinimize}}));
  } else {
    return InvalidArgumentError(f.Path("goal") + ": required; use MAXIMIZE or MINIMIZE");
  }
  return m;
}

}  // namespace

StatusOr<ParameterSpec> ParseParameterSpec(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Read(j, path,
                                             {"parameterId", "doubleValueSpec", "integerValueSpec",
                                              "categoricalValueSpec", "discreteValueSpec",
                                              "scaleType", "conditionalParameterSpecs"}));
  ParameterSpec p;
  if (const json* v = f.Get("parameterId")) {
    TY_ASSIGN_OR_RETURN(p.parameter_id, ReadString(*v, f.Path("parameterId")));
  }
  int specs = 0;
  if (const json* v = f.Get("doubleValueSpec")) {
    ++specs;
    std::string sp = f.Path("doubleValueSpec");
    TY_ASSIGN_OR_RETURN(Fields g,
                        Fields::Read(*v, sp, {"minValue", "maxValue", "defaultValue", "gridStep"}));
    p.type = ParameterType::kDouble;
    const json* lo = g.Get("minValue");
    const json* hi = g.Get("maxValue");
    if (!lo) return InvalidArgumentError(g.Path("minValue") + ": required");
    if (!hi) return InvalidArgumentError(g.Path("maxValue") + ": required");
    TY_ASSIGN_OR_RETURN(p.min_value, ReadDouble(*lo, g.Path("minValue")));
    TY_ASSIGN_OR_RETURN(p.max_value, ReadDouble(*hi, g.Path("maxValue")));
    if (const json* s = g.Get("gridStep")) {
      TY_ASSIGN_OR_RETURN(double step, ReadDouble(*s, g.Path("gridStep")));
      p.grid_step = step;
    }
    if (const json* d = g.Get("defaultValue")) p.default_value = *d;
  }
  if (const json* v = f.Get("integerValueSpec")) {
    ++specs;
    std::string sp = f.Path("integerValueSpec");
    TY_ASSIGN_OR_RETURN(Fields g, Fields::Read(*v, sp, {"minValue", "maxValue", "defaultValue"}));
    p.type = ParameterType::kInteger;
    const json* lo = g.Get("minValue");
    const json* hi = g.Get("maxValue");
    if (!lo) return InvalidArgumentError(g.Path("minValue") + ": required");
    if (!hi) return InvalidArgumentError(g.Path("maxValue") + ": required");
    TY_ASSIGN_OR_RETURN(p.int_min, ReadInt64(*lo, g.Path("minValue")));
    TY_ASSIGN_OR_RETURN(p.int_max, ReadInt64(*hi, g.Path("maxValue")));
    if (const json* d = g.Get("defaultValue")) p.default_value = *d;
  }
  if (const json* v = f.Get("categoricalValueSpec")) {
    ++specs;
    std::string sp = f.Path("categoricalValueSpec");
    TY_ASSIGN_OR_RETURN(Fields g, Fields::Read(*v, sp, {"values", "defaultValue"}));
    p.type = ParameterType::kCategorical;
    if (const json* vals = g.Get("values")) {
      TY_ASSIGN_OR_RETURN(p.categorical_values,
                          ReadArray<std::string>(*vals, g.Path("values"), ReadString));
    }
    if (const json* d = g.Get("defaultValue")) p.default_value = *d;
  }
  if (const json* v = f.Get("discreteValueSpec")) {
    ++specs;
    std::string sp = f.Path("discreteValueSpec");
    TY_ASSIGN_OR_RETURN(Fields g, Fields::Read(*v, sp, {"values", "defaultValue"}));
    p.type = ParameterType::kDiscrete;
    if (const json* vals = g.Get("values")) {
      TY_ASSIGN_OR_RETURN(p.discrete_values,
                          ReadArray<double>(*vals, g.Path("values"), ReadDouble));
    }
    if (const json* d = g.Get("defaultValue")) p.default_value = *d;
  }
  if (specs != 1) {
    return InvalidArgumentError(
        path +
        ": give exactly one of doubleValueSpec, integerValueSpec, categoricalValueSpec, "
        "discreteValueSpec (got " +
        std::to_string(specs) + ")");
  }
  if (const json* v = f.Get("scaleType")) {
    TY_ASSIGN_OR_RETURN(p.scale_type,
                        ReadEnum<ScaleType>(*v, f.Path("scaleType"),
                                            {{"SCALE_TYPE_UNSPECIFIED", ScaleType::kUnspecified},
                                             {"UNIT_LINEAR_SCALE", ScaleType::kLinear},
                                             {"UNIT_LOG_SCALE", ScaleType::kLog},
                                             {"UNIT_REVERSE_LOG_SCALE", ScaleType::kReverseLog}}));
  }
  if (const json* v = f.Get("conditionalParameterSpecs")) {
    TY_ASSIGN_OR_RETURN(p.conditional_parameter_specs,
                        ParseConditionals(*v, f.Path("conditionalParameterSpecs")));
  }
  return p;
}

namespace {

StatusOr<std::vector<ConditionalParameterSpec>> ParseConditionals(const json& j,
                                                                  const std::string& path) {
  return ReadArray<ConditionalParameterSpec>(
      j, path, [](const json& e, const std::string& p) -> StatusOr<ConditionalParameterSpec> {
        TY_ASSIGN_OR_RETURN(Fields f, Fields::Read(e, p,
                                                   {"parameterSpec", "parentDiscreteValues",
                                                    "parentIntValues", "parentCategoricalValues"}));
        ConditionalParameterSpec c;
        int parents = 0;
        auto values_of = [&](std::string_view name) -> StatusOr<const json*> {
          const json* v = f.Get(name);
          if (!v) return static_cast<const json*>(nullptr);
          ++parents;
          TY_ASSIGN_OR_RETURN(Fields g, Fields::Read(*v, f.Path(name), {"values"}));
          const json* vals = g.Get("values");
          if (!vals) return InvalidArgumentError(g.Path("values") + ": required");
          return vals;
        };
        TY_ASSIGN_OR_RETURN(const json* dv, values_of("parentDiscreteValues"));
        if (dv) {
          TY_ASSIGN_OR_RETURN(
              c.parent_discrete_values,
              ReadArray<double>(*dv, f.Path("parentDiscreteValues.values"), ReadDouble));
        }
        TY_ASSIGN_OR_RETURN(const json* iv, values_of("parentIntValues"));
        if (iv) {
          TY_ASSIGN_OR_RETURN(c.parent_int_values,
                              ReadArray<int64_t>(*iv, f.Path("parentIntValues.values"), ReadInt64));
        }
        TY_ASSIGN_OR_RETURN(const json* cv, values_of("parentCategoricalValues"));
        if (cv) {
          TY_ASSIGN_OR_RETURN(
              c.parent_categorical_values,
              ReadArray<std::string>(*cv, f.Path("parentCategoricalValues.values"), ReadString));
        }
        if (parents != 1) {
          return InvalidArgumentError(p +
                                      ": give exactly one of parentDiscreteValues, "
                                      "parentIntValues, parentCategoricalValues");
        }
        const json* spec = f.Get("parameterSpec");
        if (!spec) return InvalidArgumentError(f.Path("parameterSpec") + ": required");
        TY_ASSIGN_OR_RETURN(c.parameter_spec, ParseParameterSpec(*spec, f.Path("parameterSpec")));
        return c;
      });
}

}  // namespace

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
      json s = {{"minValue", Int64Json(p.int_min)}, {"maxValue", Int64Json(p.int_max)}};
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
        for (int64_t v : c.parent_int_values) vals.push_back(Int64Json(v));
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

StatusOr<StudySpec> ParseStudySpec(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Read(j, path,
                   {"metrics", "parameters", "algorithm", "measurementSelectionType",
                    "medianAutomatedStoppingSpec", "decayCurveStoppingSpec",
                    "convexAutomatedStoppingSpec", "observationNoise", "studyStoppingConfig"}));
  StudySpec s;
  if (const json* v = f.Get("metrics")) {
    TY_ASSIGN_OR_RETURN(s.metrics, ReadArray<MetricSpec>(*v, f.Path("metrics"), ParseMetric));
  }
  if (const json* v = f.Get("parameters")) {
    TY_ASSIGN_OR_RETURN(s.parameters,
                        ReadArray<ParameterSpec>(*v, f.Path("parameters"), ParseParameterSpec));
  }
  if (const json* v = f.Get("algorithm")) {
    TY_ASSIGN_OR_RETURN(s.algorithm,
                        ReadEnum<Algorithm>(*v, f.Path("algorithm"),
                                            {{"ALGORITHM_UNSPECIFIED", Algorithm::kUnspecified},
                                             {"GRID_SEARCH", Algorithm::kGridSearch},
                                             {"RANDOM_SEARCH", Algorithm::kRandomSearch}}));
  }
  if (const json* v = f.Get("measurementSelectionType")) {
    TY_ASSIGN_OR_RETURN(
        s.measurement_selection,
        ReadEnum<MeasurementSelection>(
            *v, f.Path("measurementSelectionType"),
            {{"MEASUREMENT_SELECTION_TYPE_UNSPECIFIED", MeasurementSelection::kUnspecified},
             {"LAST_MEASUREMENT", MeasurementSelection::kLast},
             {"BEST_MEASUREMENT", MeasurementSelection::kBest}}));
  }
  int stopping = 0;
  if (const json* v = f.Get("medianAutomatedStoppingSpec")) {
    ++stopping;
    TY_ASSIGN_OR_RETURN(
        Fields g, Fields::Read(*v, f.Path("medianAutomatedStoppingSpec"), {"useElapsedDuration"}));
    MedianStoppingSpec m;
    if (const json* u = g.Get("useElapsedDuration")) {
      TY_ASSIGN_OR_RETURN(m.use_elapsed_duration, ReadBool(*u, g.Path("useElapsedDuration")));
    }
    s.automated_stopping = m;
  }
  if (const json* v = f.Get("decayCurveStoppingSpec")) {
    ++stopping;
    TY_ASSIGN_OR_RETURN(Fields g,
                        Fields::Read(*v, f.Path("decayCurveStoppingSpec"), {"useElapsedDuration"}));
    DecayCurveStoppingSpec d;
    if (const json* u = g.Get("useElapsedDuration")) {
      TY_ASSIGN_OR_RETURN(d.use_elapsed_duration, ReadBool(*u, g.Path("useElapsedDuration")));
    }
    s.automated_stopping = d;
  }
  if (f.Get("convexAutomatedStoppingSpec")) {
    return InvalidArgumentError(f.Path("convexAutomatedStoppingSpec") +
                                ": not supported by trainyard; use medianAutomatedStoppingSpec "
                                "or decayCurveStoppingSpec");
  }
  if (stopping > 1) {
    return InvalidArgumentError(path +
                                ": give at most one of medianAutomatedStoppingSpec, "
                                "decayCurveStoppingSpec");
  }
  // observationNoise and studyStoppingConfig are Vizier-only on Vertex; accepted and ignored.
  return s;
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

StatusOr<HyperparameterTuningJobSpec> ParseHyperparameterTuningJobSpec(const json& j) {
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Read(j, "",
                             {"displayName", "studySpec", "maxTrialCount", "parallelTrialCount",
                              "maxFailedTrialCount", "trialJobSpec"},
                             {"name", "trials", "state", "createTime", "startTime", "endTime",
                              "updateTime", "error", "labels", "encryptionSpec"}));
  HyperparameterTuningJobSpec s;
  if (const json* v = f.Get("displayName")) {
    TY_ASSIGN_OR_RETURN(s.display_name, ReadString(*v, "displayName"));
  }
  if (const json* v = f.Get("studySpec")) {
    TY_ASSIGN_OR_RETURN(s.study_spec, ParseStudySpec(*v, "studySpec"));
  } else {
    return InvalidArgumentError("studySpec: required");
  }
  if (const json* v = f.Get("maxTrialCount")) {
    TY_ASSIGN_OR_RETURN(s.max_trial_count, ReadInt32(*v, "maxTrialCount"));
  }
  if (const json* v = f.Get("parallelTrialCount")) {
    TY_ASSIGN_OR_RETURN(s.parallel_trial_count, ReadInt32(*v, "parallelTrialCount"));
  }
  if (const json* v = f.Get("maxFailedTrialCount")) {
    TY_ASSIGN_OR_RETURN(s.max_failed_trial_count, ReadInt32(*v, "maxFailedTrialCount"));
  }
  if (const json* v = f.Get("trialJobSpec")) {
    if (!v->is_object()) return TypeError("trialJobSpec", "an object (a CustomJobSpec)", *v);
    s.trial_job_spec = *v;
  }
  return s;
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

StatusOr<ParameterValue> ParseParameterValue(const json& j, const std::string& path) {
  if (j.is_string()) return ParameterValue(j.get<std::string>());
  if (j.is_number_integer()) return ParameterValue(j.get<int64_t>());
  if (j.is_number_float()) return ParameterValue(j.get<double>());
  return TypeError(path, "a number or a string", j);
}

StatusOr<Measurement> ParseMeasurement(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Read(j, path, {"elapsedDuration", "stepCount", "metrics"}));
  Measurement m;
  if (const json* v = f.Get("elapsedDuration")) {
    TY_ASSIGN_OR_RETURN(double secs, ReadDurationSeconds(*v, f.Path("elapsedDuration")));
    m.elapsed_seconds = secs;
  }
  if (const json* v = f.Get("stepCount")) {
    TY_ASSIGN_OR_RETURN(m.step_count, ReadInt64(*v, f.Path("stepCount")));
  }
  if (const json* v = f.Get("metrics")) {
    TY_ASSIGN_OR_RETURN(
        m.metrics, ReadArray<MetricValue>(
                       *v, f.Path("metrics"),
                       [](const json& e, const std::string& p) -> StatusOr<MetricValue> {
                         TY_ASSIGN_OR_RETURN(Fields g, Fields::Read(e, p, {"metricId", "value"}));
                         MetricValue mv;
                         if (const json* id = g.Get("metricId")) {
                           TY_ASSIGN_OR_RETURN(mv.metric_id, ReadString(*id, g.Path("metricId")));
                         }
                         if (const json* val = g.Get("value")) {
                           TY_ASSIGN_OR_RETURN(mv.value, ReadDouble(*val, g.Path("value")));
                         }
                         return mv;
                       }));
  }
  return m;
}

json ToJson(const Measurement& m) {
  json j;
  if (m.elapsed_seconds) j["elapsedDuration"] = FormatDuration(*m.elapsed_seconds);
  j["stepCount"] = Int64Json(m.step_count);
  json metrics = json::array();
  for (const MetricValue& v : m.metrics) {
    metrics.push_back({{"metricId", v.metric_id}, {"value", v.value}});
  }
  j["metrics"] = metrics;
  return j;
}

StatusOr<TrialState> ParseTrialState(std::string_view name, const std::string& path) {
  return ReadEnum<TrialState>(json(name), path,
                              {{"STATE_UNSPECIFIED", TrialState::kUnspecified},
                               {"REQUESTED", TrialState::kRequested},
                               {"ACTIVE", TrialState::kActive},
                               {"STOPPING", TrialState::kStopping},
                               {"SUCCEEDED", TrialState::kSucceeded},
                               {"INFEASIBLE", TrialState::kInfeasible}});
}

StatusOr<Trial> ParseTrial(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f,
                      Fields::Read(j, path,
                                   {"id", "state", "parameters", "finalMeasurement", "measurements",
                                    "startTime", "endTime", "infeasibleReason", "customJob",
                                    "earlyStopped", "jobFailed", "stopReason"},
                                   {"name", "clientId", "webAccessUris"}));
  Trial t;
  if (const json* v = f.Get("id")) {
    TY_ASSIGN_OR_RETURN(t.id, ReadString(*v, f.Path("id")));
  }
  if (const json* v = f.Get("state")) {
    TY_ASSIGN_OR_RETURN(std::string name, ReadString(*v, f.Path("state")));
    TY_ASSIGN_OR_RETURN(t.state, ParseTrialState(name, f.Path("state")));
  }
  if (const json* v = f.Get("parameters")) {
    TY_ASSIGN_OR_RETURN(
        t.parameters,
        ReadArray<TrialParameter>(
            *v, f.Path("parameters"),
            [](const json& e, const std::string& p) -> StatusOr<TrialParameter> {
              TY_ASSIGN_OR_RETURN(Fields g, Fields::Read(e, p, {"parameterId", "value"}));
              TrialParameter tp;
              const json* id = g.Get("parameterId");
              const json* val = g.Get("value");
              if (!id) return InvalidArgumentError(g.Path("parameterId") + ": required");
              if (!val) return InvalidArgumentError(g.Path("value") + ": required");
              TY_ASSIGN_OR_RETURN(tp.parameter_id, ReadString(*id, g.Path("parameterId")));
              TY_ASSIGN_OR_RETURN(tp.value, ParseParameterValue(*val, g.Path("value")));
              return tp;
            }));
  }
  if (const json* v = f.Get("finalMeasurement")) {
    TY_ASSIGN_OR_RETURN(Measurement m, ParseMeasurement(*v, f.Path("finalMeasurement")));
    t.final_measurement = std::move(m);
  }
  if (const json* v = f.Get("measurements")) {
    TY_ASSIGN_OR_RETURN(t.measurements,
                        ReadArray<Measurement>(*v, f.Path("measurements"), ParseMeasurement));
  }
  using TimeField = std::pair<const char*, std::optional<std::chrono::system_clock::time_point>*>;
  for (const TimeField& tf :
       {TimeField{"startTime", &t.start_time}, TimeField{"endTime", &t.end_time}}) {
    const auto& [name, field] = tf;
    if (const json* v = f.Get(name)) {
      TY_ASSIGN_OR_RETURN(std::string text, ReadString(*v, f.Path(name)));
      TY_ASSIGN_OR_RETURN(*field, ParseTimestamp(text, f.Path(name)));
    }
  }
  if (const json* v = f.Get("infeasibleReason")) {
    TY_ASSIGN_OR_RETURN(t.infeasible_reason, ReadString(*v, f.Path("infeasibleReason")));
  }
  if (const json* v = f.Get("customJob")) {
    TY_ASSIGN_OR_RETURN(t.custom_job, ReadString(*v, f.Path("customJob")));
  }
  if (const json* v = f.Get("earlyStopped")) {
    TY_ASSIGN_OR_RETURN(t.early_stopped, ReadBool(*v, f.Path("earlyStopped")));
  }
  if (const json* v = f.Get("stopReason")) {
    TY_ASSIGN_OR_RETURN(t.stop_reason, ReadString(*v, f.Path("stopReason")));
  }
  if (const json* v = f.Get("jobFailed")) {
    TY_ASSIGN_OR_RETURN(t.job_failed, ReadBool(*v, f.Path("jobFailed")));
  }
  return t;
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
  if (t.start_time) j["startTime"] = FormatTimestamp(*t.start_time);
  if (t.end_time) j["endTime"] = FormatTimestamp(*t.end_time);
  if (!t.infeasible_reason.empty()) j["infeasibleReason"] = t.infeasible_reason;
  if (!t.custom_job.empty()) j["customJob"] = t.custom_job;
  if (t.early_stopped) j["earlyStopped"] = true;
  if (t.job_failed) j["jobFailed"] = true;
  if (!t.stop_reason.empty()) j["stopReason"] = t.stop_reason;
  return j;
}

std::string FormatTimestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  int64_t secs = us / 1000000;
  int64_t frac = us % 1000000;
  if (frac < 0) {
    frac += 1000000;
    secs -= 1;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

StatusOr<std::chrono::system_clock::time_point> ParseTimestamp(std::string_view text,
                                                               const std::string& path) {
  std::tm tm{};
  int consumed = 0;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return InvalidArgumentError(path +
                                ": expected an RFC 3339 UTC time such as "
                                "\"2026-01-02T03:04:05Z\", got \"" +
                                s + "\"");
  }
  int64_t micros = 0;
  size_t pos = static_cast<size_t>(consumed);
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      if (digits < 6) micros = micros * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    for (; digits < 6; ++digits) micros *= 10;
  }
  if (pos + 1 != s.size() || s[pos] != 'Z') {
    return InvalidArgumentError(path + ": expected a UTC time ending in 'Z', got \"" + s + "\"");
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t secs = timegm(&tm);
  return std::chrono::system_clock::time_point(std::chrono::seconds(secs)) +
         std::chrono::microseconds(micros);
}

}  // namespace trainyard::tuning
