// proto3-JSON codec for CustomJob (lowerCamelCase names, int64 as strings, Timestamp as RFC 3339,
// Duration as "<seconds>s"), matching what the Vertex REST API sends and accepts.
//
// Unknown-field policy (docs/api.md): like Google's API front ends, decoding REJECTS unknown
// fields with INVALID_ARGUMENT naming the field and where it was found:
//   Invalid JSON payload received. Unknown name "replicaCnt" at 'jobSpec.workerPoolSpecs[0]':
//   Cannot find field.
// As in every proto3 JSON parser, both the lowerCamelCase name and the original snake_case proto
// name are accepted, and `null` means "not set". Type errors name the field path:
//   Invalid value at 'jobSpec.workerPoolSpecs[1].replicaCount' (TYPE_INT64), "two"
#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "spec/custom_job.h"

namespace trainyard::spec {

enum class DecodeMode {
  // A client request: output-only fields (name, state, times, error, trainyardInfo) are accepted
  // and ignored, so a described job can be sent back as-is.
  kRequest,
  // Our own stored form: every field is decoded.
  kStored,
};

nlohmann::json CustomJobToJson(const CustomJob& job);
nlohmann::json CustomJobSpecToJson(const CustomJobSpec& spec);

// `path_prefix` is prepended to error paths ("" for a top-level CustomJob).
StatusOr<CustomJob> CustomJobFromJson(const nlohmann::json& j, DecodeMode mode);
StatusOr<CustomJobSpec> CustomJobSpecFromJson(const nlohmann::json& j,
                                              const std::string& path_prefix);

// Parses text as JSON (INVALID_ARGUMENT with the parser's position on malformed input), then
// CustomJobFromJson.
StatusOr<CustomJob> ParseCustomJob(std::string_view text, DecodeMode mode);

}  // namespace trainyard::spec
