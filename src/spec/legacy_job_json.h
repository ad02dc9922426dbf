// proto3-JSON codec of AI Platform Training's Job (legacy_job.h), written with the protojson
// toolkit (protojson/reader.h): both spellings of every field (gcloud sends a --config file's
// keys verbatim, so `max_trials` and `maxTrials` both arrive), int64 as a string or a number,
// enums by name or number, unknown fields refused with their location, and every type error
// naming its path, e.g.
//   Invalid value at 'trainingInput.hyperparameters.goal' (google.cloud.ml.v1.HyperparameterSpec.
//   GoalType), "MAXIMISE": expected one of GOAL_TYPE_UNSPECIFIED, MAXIMIZE, MINIMIZE
// The writer emits the canonical form (lowerCamelCase, defaults omitted), so a job describes its
// trainingInput as sent, normalised; decode(encode(x)) == x (legacy_job_json_test.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"
#include "spec/legacy_job.h"

namespace trainyard::spec {

// A create request's body: jobId, labels, trainingInput; output-only fields are accepted and
// ignored (a described job can be sent back), predictionInput is refused (Trainyard trains only).
// INVALID_ARGUMENT with the field path; malformed or too deeply nested JSON too.
StatusOr<LegacyJob> ParseLegacyJobRequest(std::string_view body);
// `path` prefixes error paths ("trainingInput").
StatusOr<TrainingInput> TrainingInputFromJson(const nlohmann::json& j, const std::string& path);

nlohmann::json TrainingInputToJson(const TrainingInput& input);
nlohmann::json TrainingOutputToJson(const TrainingOutput& output);
// The Job as the API answers it (GoogleCloudMlV1Job): jobId, state, times, errorMessage, etag,
// labels, trainingInput, trainingOutput.
nlohmann::json LegacyJobToJson(const LegacyJob& job);

}  // namespace trainyard::spec
