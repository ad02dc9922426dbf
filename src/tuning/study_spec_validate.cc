#include "tuning/study_spec_validate.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace trainyard::tuning {
namespace {

constexpr int kMaxDiscreteValues = 1000;
constexpr double kMaxGridStepPoints = 100000;

bool HasWhitespace(const std::string& s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

std::string ValueSpecName(ParameterType type) {
  switch (type) {
    case ParameterType::kDouble:
      return "doubleValueSpec";
    case ParameterType::kInteger:
      return "integerValueSpec";
    case ParameterType::kCategorical:
      return "categoricalValueSpec";
    case ParameterType::kDiscrete:
      return "discreteValueSpec";
  }
  return "";
}

bool IsLogLike(const ParameterSpec& p) {
  return p.scale_type == ScaleType::kLog || p.scale_type == ScaleType::kReverseLog;
}

std::string ScaleName(const ParameterSpec& p) { return std::string(ScaleTypeName(p.scale_type)); }

Status ValidateParameterId(const ParameterSpec& p, const std::string& path,
                           std::set<std::string>* ids) {
  if (p.parameter_id.empty()) {
    return InvalidArgumentError(path + ".parameterId: required (the flag name the trial gets)");
  }
  if (HasWhitespace(p.parameter_id)) {
    return InvalidArgumentError(path + ".parameterId: must not contain whitespace, got \"" +
                                p.parameter_id + "\"");
  }
  if (!ids->insert(p.parameter_id).second) {
    return InvalidArgumentError(path + ".parameterId: \"" + p.parameter_id +
                                "\" is used by another parameter; ids must be unique");
  }
  return Status::Ok();
}

// `vs` is the path of the value spec ("...doubleValueSpec") each message starts with.
Status ValidateDoubleSpec(const ParameterSpec& p, const std::string& vs, Algorithm algorithm) {
  if (!std::isfinite(p.min_value)) {
    return InvalidArgumentError(vs + ".minValue: must be a finite number");
  }
  if (!std::isfinite(p.max_value)) {
    return InvalidArgumentError(vs + ".maxValue: must be a finite number");
  }
  if (!(p.min_value < p.max_value)) {
    return InvalidArgumentError(
        vs + ".minValue: must be < maxValue, got minValue=" + FormatParameterValue(p.min_value) +
        " maxValue=" + FormatParameterValue(p.max_value));
  }
  if (IsLogLike(p) && p.min_value <= 0) {
    return InvalidArgumentError(vs + ".minValue: " + ScaleName(p) + " needs minValue > 0, got " +
                                FormatParameterValue(p.min_value));
  }
  if (p.grid_step) {
    if (!(std::isfinite(*p.grid_step) && *p.grid_step > 0)) {
      return InvalidArgumentError(vs + ".gridStep: must be > 0, got " +
                                  FormatParameterValue(*p.grid_step));
    }
    if ((p.max_value - p.min_value) / *p.grid_step + 1 > kMaxGridStepPoints) {
      return InvalidArgumentError(vs +
                                  ".gridStep: gives more than 100000 points; use a larger "
                                  "step");
    }
  } else if (algorithm == Algorithm::kGridSearch) {
    return InvalidArgumentError(
        vs +
        ": GRID_SEARCH cannot enumerate a continuous range; list the points with "
        "discreteValueSpec{values:[...]} or add doubleValueSpec.gridStep");
  }
  return Status::Ok();
}

Status ValidateIntegerSpec(const ParameterSpec& p, const std::string& vs, Algorithm algorithm) {
  if (p.int_min > p.int_max) {
    return InvalidArgumentError(
        vs + ".minValue: must be <= maxValue, got minValue=" + std::to_string(p.int_min) +
        " maxValue=" + std::to_string(p.int_max));
  }
  if (algorithm == Algorithm::kGridSearch &&
      static_cast<double>(p.int_max) - static_cast<double>(p.int_min) + 1 > kMaxGridStepPoints) {
    return InvalidArgumentError(vs +
                                ": GRID_SEARCH enumerates every integer and this range has "
                                "more than 100000; narrow it or use discreteValueSpec");
  }
  if (IsLogLike(p) && p.int_min <= 0) {
    return InvalidArgumentError(vs + ".minValue: " + ScaleName(p) + " needs minValue > 0, got " +
                                std::to_string(p.int_min));
  }
  return Status::Ok();
}

Status ValidateDiscreteSpec(const ParameterSpec& p, const std::string& vs) {
  const auto& v = p.discrete_values;
  if (v.empty()) return InvalidArgumentError(vs + ".values: needs at least one value");
  if (v.size() > kMaxDiscreteValues) {
    return InvalidArgumentError(vs + ".values: at most 1000 values, got " +
                                std::to_string(v.size()));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    std::string at = vs + ".values[" + std::to_string(i) + "]";
    if (!std::isfinite(v[i])) return InvalidArgumentError(at + ": must be a finite number");
    if (i > 0 && !(v[i] - v[i - 1] >= 1e-10)) {
      return InvalidArgumentError(at + ": values must increase by at least 1e-10, got " +
                                  FormatParameterValue(v[i - 1]) + " then " +
                                  FormatParameterValue(v[i]));
    }
  }
  if (IsLogLike(p) && v.front() <= 0) {
    return InvalidArgumentError(vs + ".values[0]: " + ScaleName(p) + " needs all values > 0, got " +
                                FormatParameterValue(v.front()));
  }
  return Status::Ok();
}

Status ValidateCategoricalSpec(const ParameterSpec& p, const std::string& path,
                               const std::string& vs) {
  const auto& v = p.categorical_values;
  if (v.empty()) return InvalidArgumentError(vs + ".values: needs at least one value");
  std::set<std::string> seen;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string at = vs + ".values[" + std::to_string(i) + "]";
    if (v[i].empty()) return InvalidArgumentError(at + ": must not be empty");
    if (!seen.insert(v[i]).second) {
      return InvalidArgumentError(at + ": \"" + v[i] + "\" is listed twice");
    }
  }
  if (p.scale_type != ScaleType::kUnspecified) {
    return InvalidArgumentError(path +
                                ".scaleType: leave it unset for categorical "
                                "parameters, got " +
                                ScaleName(p));
  }
  return Status::Ok();
}

Status ValidateValueSpec(const ParameterSpec& p, const std::string& path, Algorithm algorithm) {
  const std::string vs = path + "." + ValueSpecName(p.type);
  switch (p.type) {
    case ParameterType::kDouble:
      return ValidateDoubleSpec(p, vs, algorithm);
    case ParameterType::kInteger:
      return ValidateIntegerSpec(p, vs, algorithm);
    case ParameterType::kDiscrete:
      return ValidateDiscreteSpec(p, vs);
    case ParameterType::kCategorical:
      return ValidateCategoricalSpec(p, path, vs);
  }
  return Status::Ok();
}

// Checks that conditional child `c` (at path `cp`) names parent values that `p` can take.
Status ValidateParentValues(const ParameterSpec& p, const ConditionalParameterSpec& c,
                            const std::string& cp) {
  switch (p.type) {
    case ParameterType::kDouble:
      return InvalidArgumentError(cp +
                                  ": a DOUBLE parameter cannot have conditional children; "
                                  "make \"" +
                                  p.parameter_id + "\" discrete");
    case ParameterType::kDiscrete: {
      if (c.parent_discrete_values.empty()) {
        return InvalidArgumentError(cp + ": parent \"" + p.parameter_id +
                                    "\" is DISCRETE; give parentDiscreteValues{values}");
      }
      for (size_t k = 0; k < c.parent_discrete_values.size(); ++k) {
        double v = c.parent_discrete_values[k];
        bool found = std::any_of(p.discrete_values.begin(), p.discrete_values.end(), [&](double d) {
          return std::fabs(d - v) <= 1e-12 * (1 + std::fabs(d));
        });
        if (!found) {
          return InvalidArgumentError(cp + ".parentDiscreteValues.values[" + std::to_string(k) +
                                      "]: " + FormatParameterValue(v) +
                                      " is not one of the parent's values");
        }
      }
      return Status::Ok();
    }
    case ParameterType::kInteger: {
      if (c.parent_int_values.empty()) {
        return InvalidArgumentError(cp + ": parent \"" + p.parameter_id +
                                    "\" is INTEGER; give parentIntValues{values}");
      }
      for (size_t k = 0; k < c.parent_int_values.size(); ++k) {
        int64_t v = c.parent_int_values[k];
        if (v < p.int_min || v > p.int_max) {
          return InvalidArgumentError(cp + ".parentIntValues.values[" + std::to_string(k) +
                                      "]: " + std::to_string(v) + " is outside the parent's [" +
                                      std::to_string(p.int_min) + ", " + std::to_string(p.int_max) +
                                      "]");
        }
      }
      return Status::Ok();
    }
    case ParameterType::kCategorical: {
      if (c.parent_categorical_values.empty()) {
        return InvalidArgumentError(cp + ": parent \"" + p.parameter_id +
                                    "\" is CATEGORICAL; give parentCategoricalValues{values}");
      }
      for (size_t k = 0; k < c.parent_categorical_values.size(); ++k) {
        const std::string& v = c.parent_categorical_values[k];
        if (std::find(p.categorical_values.begin(), p.categorical_values.end(), v) ==
            p.categorical_values.end()) {
          return InvalidArgumentError(cp + ".parentCategoricalValues.values[" + std::to_string(k) +
                                      "]: \"" + v + "\" is not one of the parent's values");
        }
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status ValidateParameter(const ParameterSpec& p, const std::string& path, Algorithm algorithm,
                         std::set<std::string>* ids) {
  TY_RETURN_IF_ERROR(ValidateParameterId(p, path, ids));
  TY_RETURN_IF_ERROR(ValidateValueSpec(p, path, algorithm));
  for (size_t i = 0; i < p.conditional_parameter_specs.size(); ++i) {
    const ConditionalParameterSpec& c = p.conditional_parameter_specs[i];
    const std::string cp = path + ".conditionalParameterSpecs[" + std::to_string(i) + "]";
    TY_RETURN_IF_ERROR(ValidateParentValues(p, c, cp));
    TY_RETURN_IF_ERROR(ValidateParameter(c.parameter_spec, cp + ".parameterSpec", algorithm, ids));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateStudySpec(const StudySpec& spec, const std::string& path) {
  if (spec.metrics.empty()) {
    return InvalidArgumentError(path + ".metrics: required; give one {metricId, goal}");
  }
  if (spec.metrics.size() > 1) {
    return InvalidArgumentError(path + ".metrics: trainyard optimises a single metric, got " +
                                std::to_string(spec.metrics.size()) +
                                "; keep the one to optimise (others can still be reported)");
  }
  const MetricSpec& m = spec.metrics[0];
  if (m.metric_id.empty()) {
    return InvalidArgumentError(path +
                                ".metrics[0].metricId: required (the tag the trainer "
                                "reports through cloudml-hypertune)");
  }
  if (HasWhitespace(m.metric_id)) {
    return InvalidArgumentError(path + ".metrics[0].metricId: must not contain whitespace");
  }
  if (spec.parameters.empty()) {
    return InvalidArgumentError(path + ".parameters: required; give at least one parameter");
  }
  std::set<std::string> ids;
  for (size_t i = 0; i < spec.parameters.size(); ++i) {
    TY_RETURN_IF_ERROR(ValidateParameter(
        spec.parameters[i], path + ".parameters[" + std::to_string(i) + "]", spec.algorithm, &ids));
  }
  return Status::Ok();
}

Status ValidateHyperparameterTuningJobSpec(const HyperparameterTuningJobSpec& spec) {
  if (spec.display_name.empty()) return InvalidArgumentError("displayName: required");
  if (spec.max_trial_count < 1) {
    return InvalidArgumentError("maxTrialCount: required, must be >= 1, got " +
                                std::to_string(spec.max_trial_count));
  }
  if (spec.parallel_trial_count < 1) {
    return InvalidArgumentError("parallelTrialCount: required, must be >= 1, got " +
                                std::to_string(spec.parallel_trial_count));
  }
  if (spec.max_failed_trial_count < 0) {
    return InvalidArgumentError(
        "maxFailedTrialCount: must be >= 0 (0 lets trainyard decide), got " +
        std::to_string(spec.max_failed_trial_count));
  }
  return ValidateStudySpec(spec.study_spec, "studySpec");
}

}  // namespace trainyard::tuning
