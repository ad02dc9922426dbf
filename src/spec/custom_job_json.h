// proto3-JSON codec for CustomJob (lowerCamelCase names, int64 as strings, Timestamp as RFC 3339,
// Duration as "<seconds>s"), matching what the Vertex REST API sends and accepts. Written with the
// protojson toolkit (protojson/reader.h), which fixes the rules and the error wording shared by
// every resource: unknown fields are REJECTED with INVALID_ARGUMENT naming the field and where it
// was found, as Google's API front ends do:
//   Invalid JSON payload received. Unknown name "replicaCnt" at 'jobSpec.workerPoolSpecs[0]':
//   Cannot find field.
// Both the lowerCamelCase name and the original snake_case proto name are accepted, and `null`
// means "not set". Type errors name the field path:
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

// `path_prefix` is prepended to error paths ("" for a document whose root is the CustomJobSpec,
// e.g. a --config file; the root is then called 'customJobSpec' in errors).
StatusOr<CustomJob> CustomJobFromJson(const nlohmann::json& j, DecodeMode mode);
StatusOr<CustomJobSpec> CustomJobSpecFromJson(const nlohmann::json& j,
                                              const std::string& path_prefix);

// Parses text as JSON with protojson::ParseJson (INVALID_ARGUMENT with the parser's position on
// malformed or too deeply nested input), then CustomJobFromJson.
StatusOr<CustomJob> ParseCustomJob(std::string_view text, DecodeMode mode);

}  // namespace trainyard::spec
