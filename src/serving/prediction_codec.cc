#include "serving/prediction_codec.h"

#include "common/json_parse.h"

namespace trainyard::serving {
namespace {

using nlohmann::json;

constexpr char kExample[] = "{\"instances\": [\"a text\", {\"text\": \"another\"}]}";

std::string TypeName(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

StatusOr<std::string> InstanceText(const json& instance, const std::string& path) {
  if (instance.is_string()) return instance.get<std::string>();
  if (!instance.is_object()) {
    return InvalidFieldError(path,
                             "expected a string or {\"text\": \"...\"}, got " + TypeName(instance));
  }
  for (const auto& [key, value] : instance.items()) {
    if (key != "text") {
      return InvalidFieldError(path + "." + key,
                               "unknown field; an instance is a string or {\"text\": \"...\"}");
    }
    if (!value.is_string()) {
      return InvalidFieldError(path + ".text", "expected a string, got " + TypeName(value));
    }
  }
  if (!instance.contains("text")) {
    return InvalidFieldError(path, "an object instance needs \"text\": {\"text\": \"...\"}");
  }
  return instance["text"].get<std::string>();
}

}  // namespace

StatusOr<std::vector<std::string>> ParseTextInstances(std::string_view body) {
  auto parsed = ParseJson(body);
  if (!parsed.ok()) {
    return InvalidArgumentError("the request body: " + parsed.status().message() + "; send " +
                                kExample);
  }
  const json& request = *parsed;
  if (!request.is_object()) {
    return InvalidArgumentError("the request body must be a JSON object, got " + TypeName(request) +
                                "; send " + kExample);
  }
  for (const auto& [key, value] : request.items()) {
    if (key == "parameters") {
      if (!value.is_object() && !value.is_null()) {
        return InvalidFieldError("parameters", "expected an object, got " + TypeName(value));
      }
    } else if (key != "instances") {
      return InvalidFieldError(key,
                               "unknown field; a predict request has \"instances\" and "
                               "optionally \"parameters\"");
    }
  }
  auto it = request.find("instances");
  if (it == request.end() || !it->is_array() || it->empty()) {
    return InvalidFieldError(
        "instances", it == request.end() || it->is_array()
                         ? std::string("required: one or more instances, e.g. ") + kExample
                         : "expected an array, got " + TypeName(*it) + "; send " + kExample);
  }
  std::vector<std::string> texts;
  texts.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    TY_ASSIGN_OR_RETURN(std::string text,
                        InstanceText((*it)[i], "instances[" + std::to_string(i) + "]"));
    texts.push_back(std::move(text));
  }
  return texts;
}

nlohmann::json EncodePredictions(const std::vector<TextPrediction>& predictions,
                                 const std::vector<std::string>& labels) {
  json out = json::array();
  for (const TextPrediction& p : predictions) {
    out.push_back(
        {{"label", labels.at(static_cast<size_t>(p.label))}, {"probabilities", p.probabilities}});
  }
  return json{{"predictions", std::move(out)}};
}

}  // namespace trainyard::serving
