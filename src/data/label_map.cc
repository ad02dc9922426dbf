#include "data/label_map.h"

#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "common/file_util.h"
#include "common/json_parse.h"

namespace trainyard::data {
namespace {

std::optional<int> ParseId(std::string_view s) {
  int id = -1;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (ec != std::errc() || ptr != s.data() + s.size() || id < 0) return std::nullopt;
  return id;
}

// id -> name pairs into a dense vector; rejects gaps and duplicates.
StatusOr<LabelMap> FromPairs(const std::map<int, std::string>& by_id, std::string_view source) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  int expected = 0;
  for (const auto& [id, name] : by_id) {
    if (id != expected) {
      return InvalidArgumentError(std::string(source) + ": class ids must be 0.." +
                                  std::to_string(by_id.size() - 1) + " without gaps; id " +
                                  std::to_string(expected) + " is missing");
    }
    if (name.empty()) {
      return InvalidArgumentError(std::string(source) + ": class " + std::to_string(id) +
                                  " has an empty name");
    }
    if (!seen.insert(name).second) {
      return InvalidArgumentError(std::string(source) + ": class name '" + name +
                                  "' is used twice; names must be unique");
    }
    names.push_back(name);
    ++expected;
  }
  if (names.empty()) {
    return InvalidArgumentError(std::string(source) + ": no classes; expected e.g. " +
                                R"({"id2label": {"0": "negative", "1": "positive"}})");
  }
  return LabelMap(std::move(names));
}

StatusOr<LabelMap> FromIdToName(const nlohmann::json& obj, std::string_view source) {
  std::map<int, std::string> by_id;
  for (const auto& [key, value] : obj.items()) {
    auto id = ParseId(key);
    if (!id || !value.is_string()) {
      return InvalidArgumentError(std::string(source) +
                                  ": expected \"<class id>\": \"<name>\", got \"" + key +
                                  "\": " + value.dump());
    }
    by_id[*id] = value.get<std::string>();
  }
  return FromPairs(by_id, source);
}

// The names `j` holds: an array of names, or an object id -> name or name -> id (the value of
// "id2label" or "labels", or a whole file in one of the bare shapes).
StatusOr<LabelMap> FromNames(const nlohmann::json& j, std::string_view source) {
  if (j.is_array()) {
    std::map<int, std::string> by_id;
    for (size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_string()) {
        return InvalidArgumentError(std::string(source) + ": label " + std::to_string(i) +
                                    " must be a string, got " + j[i].dump());
      }
      by_id[static_cast<int>(i)] = j[i].get<std::string>();
    }
    return FromPairs(by_id, source);
  }
  if (!j.is_object()) {
    return InvalidArgumentError(std::string(source) +
                                ": expected a JSON array of class names or an id2label object");
  }
  // {"0": "neg"} (id -> name) or {"neg": 0} (name -> id): decided by the value type.
  bool name_to_id = !j.empty() && j.begin()->is_number_integer();
  if (!name_to_id) return FromIdToName(j, source);
  std::map<int, std::string> by_id;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      return InvalidArgumentError(std::string(source) +
                                  ": expected \"<name>\": <class id>, got \"" + key +
                                  "\": " + value.dump());
    }
    const int id = value.get<int>();
    if (by_id.count(id)) {
      return InvalidArgumentError(std::string(source) + ": class id " + std::to_string(id) +
                                  " is used twice");
    }
    by_id[id] = key;
  }
  return FromPairs(by_id, source);
}

}  // namespace

LabelMap LabelMap::FromIds(int num_classes) {
  std::vector<std::string> names;
  for (int i = 0; i < num_classes; ++i) names.push_back(std::to_string(i));
  return LabelMap(std::move(names));
}

StatusOr<LabelMap> LabelMap::FromJson(std::string_view json_text, std::string_view source) {
  StatusOr<nlohmann::json> parsed = ParseJson(json_text);
  if (!parsed.ok()) {
    return InvalidArgumentError(std::string(source) +
                                ": not valid JSON: " + parsed.status().message());
  }
  nlohmann::json j = std::move(*parsed);
  if (j.is_object() && (j.contains("id2label") || j.contains("labels"))) {
    std::optional<int64_t> num_labels;
    if (j.contains("num_labels")) {
      if (!j["num_labels"].is_number_integer()) {
        return InvalidArgumentError(std::string(source) + ": num_labels must be an integer, got " +
                                    j["num_labels"].dump());
      }
      num_labels = j["num_labels"].get<int64_t>();
    }
    TY_ASSIGN_OR_RETURN(LabelMap map,
                        FromNames(j.contains("id2label") ? j["id2label"] : j["labels"], source));
    if (num_labels && *num_labels != map.size()) {
      return InvalidArgumentError(std::string(source) + ": num_labels is " +
                                  std::to_string(*num_labels) + " but " +
                                  std::to_string(map.size()) + " classes are named");
    }
    return map;
  }
  return FromNames(j, source);
}

StatusOr<LabelMap> LabelMap::FromFile(const std::filesystem::path& path) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return FromJson(text, path.string());
}

std::string LabelMap::ToJson(const nlohmann::ordered_json& provenance) const {
  nlohmann::ordered_json id2label = nlohmann::ordered_json::object();
  nlohmann::ordered_json label2id = nlohmann::ordered_json::object();
  for (size_t i = 0; i < names_.size(); ++i) {
    id2label[std::to_string(i)] = names_[i];
    label2id[names_[i]] = i;
  }
  nlohmann::ordered_json j = {
      {"num_labels", names_.size()}, {"id2label", id2label}, {"label2id", label2id}};
  if (provenance.is_object()) {
    for (const auto& [key, value] : provenance.items()) {
      if (!j.contains(key) && key != "labels" && key != "label_to_id") j[key] = value;
    }
  }
  // Names come from user data; replace invalid UTF-8 rather than throw.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace trainyard::data
