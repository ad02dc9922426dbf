// The one place where a Status becomes an HTTP response (STYLE.md §6), following google.rpc.Code's
// HTTP mapping: INVALID_ARGUMENT/FAILED_PRECONDITION/OUT_OF_RANGE 400, UNAUTHENTICATED 401,
// PERMISSION_DENIED 403, NOT_FOUND 404, ALREADY_EXISTS/ABORTED 409, RESOURCE_EXHAUSTED 429,
// CANCELLED 499, UNKNOWN/INTERNAL/DATA_LOSS 500, UNIMPLEMENTED 501, UNAVAILABLE 503,
// DEADLINE_EXCEEDED 504. The body is the google.rpc.Status JSON of Google APIs:
//   {"error": {"code": 400, "message": "...", "status": "INVALID_ARGUMENT"}}
// An error about request fields also carries google.rpc.BadRequest in `details`:
//   "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
//                "fieldViolations": [{"field": "jobSpec.workerPoolSpecs[0].replicaCount",
//                                     "description": "..."}]}]
// from Status::field_violations(), or, for an INVALID_ARGUMENT / FAILED_PRECONDITION / OUT_OF_RANGE
// without any, from the wording every validator shares ("<field path>: <what is wrong>",
// protojson/reader.h), so clients (gcloud prints them; the console shows each next to its field)
// get the field of every validation error.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <utility>
#include <vector>

#include "common/status.h"

namespace trainyard::api {

// An API whose HTTP mapping differs from google.rpc's in a few codes (Cloud Storage answers a
// failed precondition 409/412) lists only those: {code, http status} pairs.
using HttpStatusOverrides = std::span<const std::pair<StatusCode, int>>;

// The HTTP status of `code`: the API's override when it has one, else google.rpc's mapping.
int HttpStatusFor(StatusCode code, HttpStatusOverrides overrides = {});

// The field violations the error body of `status` carries (see above); empty for other errors.
std::vector<FieldViolation> FieldViolationsOf(const Status& status);

// The error body; "code" is the HTTP status, as Google's REST front ends send it.
nlohmann::json ErrorBody(const Status& status);
// For transport-level failures that have no handler (413 too large, 404 no route): the body for
// an explicit HTTP status with the closest google.rpc code name.
nlohmann::json ErrorBody(int http_status, StatusCode code, const std::string& message);

}  // namespace trainyard::api
