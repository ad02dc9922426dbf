// proto3-JSON codec for the tuning model (study_spec.h), in the shape of Vertex AI's REST API.
//
// Written with the protojson toolkit (protojson/reader.h), so the rules and the error wording are
// those of every other resource: lowerCamelCase names (snake_case accepted too), enums by name or
// number, int64 as a JSON string or number (written as a string), Duration as "1.5s", Timestamp
// as RFC 3339. Unknown fields are refused with their location, so a typo ("maxTrialCont") never
// silently does nothing. Parse* functions check shape and types only; study_spec_validate.h
// checks meaning. Errors are INVALID_ARGUMENT naming the field, e.g.
//   Invalid value at 'studySpec.parameters[2].doubleValueSpec.minValue' (TYPE_DOUBLE), "a"
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "protojson/reader.h"
#include "tuning/study_spec.h"

namespace trainyard::tuning {

// The codec's enum tables (names and numbers of study.proto), also what the API's
// `$alt=json;enum-encoding=int` maps (api/system_params.cc). GoalType has no UNSPECIFIED entry:
// a metric must name its goal.
const protojson::EnumType<Goal>& GoalEnum();
const protojson::EnumType<ScaleType>& ScaleTypeEnum();
const protojson::EnumType<Algorithm>& AlgorithmEnum();
const protojson::EnumType<MeasurementSelection>& MeasurementSelectionEnum();
const protojson::EnumType<TrialState>& TrialStateEnum();

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

// A Trial.State name to its value; INVALID_ARGUMENT listing the accepted names otherwise.
StatusOr<TrialState> ParseTrialState(std::string_view name, const std::string& path);

}  // namespace trainyard::tuning
