// JSON shapes and errors of the Cloud Storage JSON API (v1), shared by the storage routes.
//
// Errors follow GCS, not google.rpc: {"error": {"code": 404, "message": "...", "errors":
// [{"message": "...", "domain": "global", "reason": "notFound"}]}}; the HTTP status of each
// Status code is chosen here, in one place, as GCS answers: FAILED_PRECONDITION 409 (bucket not
// empty, name clash), ABORTED 412 (an if*Match precondition), OUT_OF_RANGE 400.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "common/url_encode.h"
#include "storage/object_store.h"

namespace trainyard::storage {

int GcsHttpStatus(StatusCode code);
void SendGcsError(httplib::Response& res, const Status& status);
void SendGcsJson(httplib::Response& res, int http_status, const nlohmann::json& body);

// "http://HOST" of the request (its Host header), for links back at this server.
std::string BaseUrl(const httplib::Request& req);
using trainyard::UrlEncode;  // common/url_encode.h: object names in URL paths
// Decodes %XX escapes; INVALID_ARGUMENT on a malformed escape.
StatusOr<std::string> UrlDecode(std::string_view s);

nlohmann::json BucketJson(const BucketInfo& bucket, const std::string& base_url);
nlohmann::json ObjectJson(const ObjectInfo& object, const std::string& base_url);

// The metadata a client sends for a new object (upload metadata, copy/compose destination):
// contentType, contentEncoding, metadata. INVALID_ARGUMENT naming the field for wrong types.
Status ParseWriteMetadata(const nlohmann::json& j, WriteMetadata* meta);

// ifGenerationMatch / ifGenerationNotMatch query parameters (strict integers).
StatusOr<Preconditions> PreconditionsFromQuery(const httplib::Request& req,
                                               const std::string& prefix = "");

}  // namespace trainyard::storage
