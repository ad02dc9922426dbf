// What the server reads of a prediction request before a deployed model sees it, and the
// envelope Google's generated REST clients put around rawPredict (serving_contract.h says what a
// model answers). The api's :predict and :rawPredict routes use these; the fuzz harness
// predict_request runs them on arbitrary bytes. Never throw.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::serving_proxy {

// INVALID_ARGUMENT in Vertex's words for a body over its 1.5 MB prediction limit.
Status CheckPayloadSize(std::string_view body);

// A :predict body — {"instances": [...], "parameters": ..., "labels": {...}} — checked as Vertex
// checks it (JSON object, a non-empty `instances` list, no other field, `labels` a map of
// strings), and the body the model gets: as sent, or without `labels` (request metadata the
// Node client always sends, empty or not; a model is not given it). INVALID_ARGUMENT naming the
// field otherwise.
StatusOr<std::string> PredictBodyForModel(std::string_view body);

// google.api.HttpBody in JSON, which the Python and Node PredictionServiceClients send as
// rawPredict's body ({"httpBody": {"contentType": ..., "data": base64}}) and read back as the
// answer; gcloud and plain HTTP clients send the model's bytes themselves.
struct HttpBody {
  std::string content_type;
  std::string data;  // decoded
};
// The envelope's content, or nullopt when `body` is not exactly such an envelope (then it is
// the model's bytes as they are).
std::optional<HttpBody> UnwrapHttpBody(std::string_view body);
// {"contentType": ..., "data": base64(data)}.
std::string WrapHttpBody(const HttpBody& body);

}  // namespace trainyard::serving_proxy
