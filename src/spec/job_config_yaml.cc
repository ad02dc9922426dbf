#include "spec/job_config_yaml.h"

#include <yaml-cpp/yaml.h>

#include <regex>

#include "common/json_parse.h"
#include "protojson/parse.h"
#include "protojson/reader.h"
#include "spec/custom_job_json.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;

json ScalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  static const std::regex kInt(R"([-+]?[0-9]+)");
  static const std::regex kFloat(R"([-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?)");
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s == "null" || s == "~" || s == "Null" || s == "NULL") return nullptr;
  if (std::regex_match(s, kInt)) {
    try {
      return std::stoll(s);
    } catch (...) {
      return s;
    }
  }
  if (std::regex_match(s, kFloat)) return std::stod(s);
  return s;
}

// The limits of a YAML document: the JSON limit of ParseJson (JsonLimits) for nesting, and a
// budget of values because aliases (`*a`) repeat a subtree without repeating its text, so a few
// hundred bytes of `&a [*b, *b, ...]` expand to billions of values.
constexpr int kMaxYamlDepth = JsonLimits{}.max_depth;
constexpr size_t kMaxYamlValues = 1'000'000;
constexpr size_t kMaxYamlBytes = JsonLimits{}.max_bytes;

StatusOr<json> NodeToJson(const YAML::Node& node, int depth, size_t* values_left) {
  if (*values_left == 0) {
    return InvalidArgumentError("YAML expands to more than " + std::to_string(kMaxYamlValues) +
                                " values (aliases repeat their subtree); write it out plainly");
  }
  --*values_left;
  const bool nested = node.Type() == YAML::NodeType::Sequence || node.Type() == YAML::NodeType::Map;
  if (nested && depth >= kMaxYamlDepth) {
    return InvalidArgumentError("YAML nests deeper than " + std::to_string(kMaxYamlDepth) +
                                " levels; flatten it");
  }
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& n : node) {
        TY_ASSIGN_OR_RETURN(json v, NodeToJson(n, depth + 1, values_left));
        a.push_back(std::move(v));
      }
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : node) {
        TY_ASSIGN_OR_RETURN(json v, NodeToJson(kv.second, depth + 1, values_left));
        o[kv.first.as<std::string>()] = std::move(v);
      }
      return o;
    }
  }
  return json(nullptr);
}

// gcloud rejects snake_case keys in --config; so do we, except inside free-form maps (labels)
// and values.
Status CheckCamelCase(const json& j, const std::string& path) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      std::string p = protojson::JoinPath(path, k);
      if (k.find('_') != std::string::npos) {
        return protojson::FieldError(p, "keys must be lowerCamelCase; write '" +
                                            protojson::SnakeToCamel(k) + "' instead of '" + k +
                                            "'");
      }
      if (k == "labels") continue;
      TY_RETURN_IF_ERROR(CheckCamelCase(v, p));
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      TY_RETURN_IF_ERROR(CheckCamelCase(j[i], protojson::IndexPath(path, i)));
    }
  }
  return Status::Ok();
}

bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  static const std::regex kPlain(R"([A-Za-z_/][A-Za-z0-9_./@+-]*)");
  if (!std::regex_match(s, kPlain)) return true;
  return s == "true" || s == "false" || s == "null" || s == "yes" || s == "no" || s == "on" ||
         s == "off" || s == "~";
}

void EmitYaml(const json& j, int indent, std::string* out);

std::string ScalarYaml(const json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    return NeedsQuotes(s) ? json(s).dump() : s;  // JSON string syntax is valid YAML
  }
  return j.dump();
}

void EmitYaml(const json& j, int indent, std::string* out) {
  const std::string pad(indent, ' ');
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      *out += pad + (NeedsQuotes(k) ? json(k).dump() : k) + ":";
      if ((v.is_object() || v.is_array()) && !v.empty()) {
        *out += "\n";
        EmitYaml(v, v.is_array() ? indent : indent + 2, out);
      } else if (v.is_object()) {
        *out += " {}\n";
      } else if (v.is_array()) {
        *out += " []\n";
      } else {
        *out += " " + ScalarYaml(v) + "\n";
      }
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (v.is_object() && !v.empty()) {
        std::string inner;
        EmitYaml(v, indent + 2, &inner);
        // First line of the item goes after "- ".
        inner.replace(0, indent + 2, pad + "- ");
        *out += inner;
      } else if (v.is_array() && !v.empty()) {
        *out += pad + "-\n";
        EmitYaml(v, indent + 2, out);
      } else {
        *out += pad + "- " + (v.is_object() ? "{}" : v.is_array() ? "[]" : ScalarYaml(v)) + "\n";
      }
    }
  } else {
    *out += pad + ScalarYaml(j) + "\n";
  }
}

}  // namespace

StatusOr<json> YamlToJson(std::string_view yaml_text) {
  if (yaml_text.size() > kMaxYamlBytes) {
    return InvalidArgumentError("YAML text of " + std::to_string(yaml_text.size()) +
                                " bytes exceeds the limit of " + std::to_string(kMaxYamlBytes));
  }
  StatusOr<json> j = json();
  try {
    size_t values_left = kMaxYamlValues;
    j = NodeToJson(YAML::Load(std::string(yaml_text)), 0, &values_left);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(std::string("malformed YAML: ") + e.what());
  }
  if (!j.ok()) return j;
  // yaml-cpp passes bytes through; JSON (and every API behind it) needs UTF-8. The library's
  // serializer is the validator: it throws on the first invalid sequence.
  try {
    (void)j->dump();
  } catch (const json::type_error& e) {
    return InvalidArgumentError(std::string("a YAML string is not valid UTF-8 (") + e.what() +
                                "); save the file as UTF-8");
  }
  return j;
}

StatusOr<CustomJobSpec> ParseJobConfigYaml(std::string_view yaml_text, const std::string& source) {
  auto j = YamlToJson(yaml_text);
  if (!j.ok()) return j.status().WithPrefix(source);
  if (!j->is_object()) {
    return InvalidArgumentError(source +
                                ": expected a YAML map holding a CustomJobSpec "
                                "(workerPoolSpecs: [...])");
  }
  if (Status s = CheckCamelCase(*j, ""); !s.ok()) return s.WithPrefix(source);
  auto spec = CustomJobSpecFromJson(*j, "");
  if (!spec.ok()) return spec.status().WithPrefix(source);
  return spec;
}

std::string JsonToYaml(const json& j) {
  std::string out;
  EmitYaml(j, 0, &out);
  return out;
}

}  // namespace trainyard::spec
