// proto3-JSON codec for the tuning model (study_spec.h), in the shape of Vertex AI's REST API.
//
// Parsing follows proto3 JSON: field names in lowerCamelCase (the original snake_case names are
// accepted too), enums by name, int64 as a JSON string or number, Duration as "1.5s". Unknown
// fields are refused with their path, so a typo ("maxTrialCont") never silently does nothing.
// Parse* functions check shape and types only; study_spec_validate.h checks meaning.
// Errors are INVALID_ARGUMENT with the JSON path of the field, e.g.
// "studySpec.parameters[2].doubleValueSpec.minValue: expected a number, got \"a\"".
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "tuning/study_spec.h"

namespace trainyard::tuning {

// A HyperparameterTuningJob body (displayName, studySpec, maxTrialCount, parallelTrialCount,
// maxFailedTrialCount, trialJobSpec). Output-only fields (name, state, trials, createTime, ...)
// are ignored so that a GET response can be sent back as a create body. Does not validate; call
// ValidateHyperparameterTuningJobSpec.
StatusOr<HyperparameterTuningJobSpec> ParseHyperparameterTuningJobSpec(const nlohmann::json& j);
nlohmann::json ToJson(const HyperparameterTuningJobSpec& spec);

// `path` prefixes error messages ("studySpec").
StatusOr<StudySpec> ParseStudySpec(const nlohmann::json& j, const std::string& path = "studySpec");
nlohmann::json ToJson(const StudySpec& spec);

StatusOr<ParameterSpec> ParseParameterSpec(const nlohmann::json& j, const std::string& path);
nlohmann::json ToJson(const ParameterSpec& spec);

StatusOr<Measurement> ParseMeasurement(const nlohmann::json& j, const std::string& path);
nlohmann::json ToJson(const Measurement& measurement);

StatusOr<Trial> ParseTrial(const nlohmann::json& j, const std::string& path);
nlohmann::json ToJson(const Trial& trial);

// A parameter value as google.protobuf.Value: integers as JSON integers, doubles as JSON
// floats, categorical values as strings.
nlohmann::json ToJson(const ParameterValue& value);
StatusOr<ParameterValue> ParseParameterValue(const nlohmann::json& j, const std::string& path);

// RFC 3339 UTC with microseconds ("2026-11-22T02:44:24.123456Z") and back.
std::string FormatTimestamp(std::chrono::system_clock::time_point t);
StatusOr<std::chrono::system_clock::time_point> ParseTimestamp(std::string_view text,
                                                               const std::string& path);

// Enum names to values; INVALID_ARGUMENT listing the accepted names otherwise.
StatusOr<TrialState> ParseTrialState(std::string_view name, const std::string& path);

}  // namespace trainyard::tuning
