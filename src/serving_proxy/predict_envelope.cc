#include "serving_proxy/predict_envelope.h"

#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/json_parse.h"
#include "replica_contract/serving_contract.h"

namespace trainyard::serving_proxy {

using nlohmann::json;

Status CheckPayloadSize(std::string_view body) {
  const size_t limit = serving_contract::kMaxPredictRequestBytes;
  if (body.size() > limit) {
    return InvalidArgumentError("Request payload size exceeds the limit: " + std::to_string(limit) +
                                " bytes (got " + std::to_string(body.size()) +
                                "); send fewer instances per request");
  }
  return Status::Ok();
}

StatusOr<std::string> PredictBodyForModel(std::string_view body) {
  TY_RETURN_IF_ERROR(CheckPayloadSize(body));
  if (body.empty()) {
    return InvalidArgumentError("request body is empty; send {\"instances\": [...]}");
  }
  TY_ASSIGN_OR_RETURN(json j, ParseJson(body));
  if (!j.is_object()) return InvalidArgumentError("the request must be a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (k != "instances" && k != "parameters" && k != "labels") {
      return InvalidFieldError(
          k, "unknown field; a PredictRequest has instances, parameters and labels");
    }
  }
  const auto instances = j.find("instances");
  if (instances == j.end() || !instances->is_array() || instances->empty()) {
    return InvalidFieldError("instances", "required: a non-empty list of instances");
  }
  const auto labels = j.find("labels");
  if (labels == j.end()) return std::string(body);
  if (!labels->is_object() && !labels->is_null()) {
    return InvalidFieldError("labels", "a map of strings, e.g. {\"team\": \"a\"}");
  }
  for (const auto& [k, v] : labels->items()) {
    if (!v.is_string()) return InvalidFieldError("labels." + k, "must be a string");
  }
  j.erase(labels);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<HttpBody> UnwrapHttpBody(std::string_view body) {
  // Most raw bodies are the model's own: only what could be the envelope is parsed.
  if (body.find("httpBody") == std::string_view::npos) return std::nullopt;
  StatusOr<json> j = ParseJson(body);
  if (!j.ok() || !j->is_object() || j->size() != 1) return std::nullopt;
  const auto h = j->find("httpBody");
  if (h == j->end() || !h->is_object()) return std::nullopt;
  HttpBody out{"application/json", ""};
  for (const auto& [k, v] : h->items()) {
    if (k == "contentType" && v.is_string()) {
      out.content_type = v.get<std::string>();
    } else if (k == "data" && v.is_string()) {
      if (!Base64Decode(v.get<std::string>(), &out.data)) return std::nullopt;
    } else if (k != "extensions") {
      return std::nullopt;  // not an HttpBody: the model's bytes
    }
  }
  return out;
}

std::string WrapHttpBody(const HttpBody& body) {
  return json{{"contentType", body.content_type}, {"data", Base64Encode(body.data)}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

}  // namespace trainyard::serving_proxy
