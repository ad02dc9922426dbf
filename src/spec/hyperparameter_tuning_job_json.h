// proto3-JSON codec for HyperparameterTuningJob, in the shape the Vertex REST API sends and
// accepts (lowerCamelCase, int64 as strings, Timestamp as RFC 3339), with the conventions of
// custom_job_json.h: snake_case names are accepted too, `null` means "not set", and unknown fields
// are refused with their path. The study's fields (studySpec, trials) use the tuning core's codec
// (tuning/study_spec_json.h) and trialJobSpec the CustomJobSpec codec, so an error names the
// full path, e.g. "studySpec.parameters[2].doubleValueSpec.minValue: expected a number, got \"a\""
// or "Invalid value at 'trialJobSpec.workerPoolSpecs[0].replicaCount' (TYPE_INT64), \"two\"".
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"
#include "spec/custom_job_json.h"
#include "spec/hyperparameter_tuning_job.h"

namespace trainyard::spec {

nlohmann::json HyperparameterTuningJobToJson(const HyperparameterTuningJob& job);

// kRequest: output-only fields (name, state, times, error, trials) are accepted and ignored, so a
// described job can be sent back as a create body. kStored: every field is decoded.
// INVALID_ARGUMENT with the field path on a shape or type error; does not validate (see
// hyperparameter_tuning_job_validation.h).
StatusOr<HyperparameterTuningJob> HyperparameterTuningJobFromJson(const nlohmann::json& j,
                                                                  DecodeMode mode);

// Parses text as JSON (INVALID_ARGUMENT on malformed input), then HyperparameterTuningJobFromJson.
StatusOr<HyperparameterTuningJob> ParseHyperparameterTuningJob(std::string_view text,
                                                               DecodeMode mode);

}  // namespace trainyard::spec
