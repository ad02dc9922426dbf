// Google's system parameters on the Vertex routes (https://cloud.google.com/apis/docs/system-
// parameters), as the official clients send them: `$alt=json;enum-encoding=int` (the Node and
// Python clients' REST transport), `alt=json`, `$prettyPrint`/`prettyPrint`, `$fields`, `$key`,
// `$.xgafv`, `$quotaUser`, `$userProject`, ... Each may come with or without the `$`.
//
// With enum-encoding=int, enums travel as numbers both ways: request bodies are turned back into
// enum names before the codec sees them (EnumsToNames) and responses get numbers
// (EnumsToNumbers). This is a layer over the JSON, keyed by the enum fields of CustomJob,
// HyperparameterTuningJob and TrainingPipeline (kEnumFields in the .cc), so it is independent of
// the codecs; google.protobuf.Value fields (trainingTaskInputs) pass untouched.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace trainyard::api {

struct ResponseFormat {
  bool enum_numbers = false;  // $alt=json;enum-encoding=int
  bool pretty = true;         // prettyPrint (default true, as Google's front ends)
};

// True for a system parameter name (with or without '$').
bool IsSystemParam(std::string_view key);

// The response format the request's system parameters ask for. INVALID_ARGUMENT for an alt other
// than json (media, proto and sse are not served on these routes), an unknown enum-encoding, or
// an unknown '$' parameter.
StatusOr<ResponseFormat> ParseSystemParams(const httplib::Request& req);

// Replaces enum names by their numbers in the known enum fields (unknown names are left as they
// are).
void EnumsToNumbers(nlohmann::json& body);
// Replaces enum numbers by their names; INVALID_ARGUMENT naming the field for an unknown number.
Status EnumsToNames(nlohmann::json& body);

}  // namespace trainyard::api
