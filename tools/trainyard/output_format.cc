#include "output_format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "spec/job_config_yaml.h"
#include "spec/resource_name.h"

namespace trainyard::cli {
namespace {

using nlohmann::json;

struct Key {
  std::vector<std::string> path;  // fields, and "[N]" for indexes
  std::string transform;          // "", "basename", "len", "creator"
  std::string label;
};

struct Projection {
  std::string kind;  // "value" or "table"
  std::vector<Key> keys;
};

// "--format: 'xml' is not supported[: why]; use ...".
Status FormatError(const std::string& format, const std::string& why) {
  return InvalidArgumentError("--format: '" + format + "' is not supported" +
                              (why.empty() ? "" : ": " + why) +
                              "; use json, yaml, table, value(KEY,...) or table(KEY,...), where "
                              "KEY is a dotted path such as name.basename() or state:label=STATUS");
}

std::string UpperSnake(const std::string& field) {
  std::string out;
  for (char c : field) {
    if (std::isupper(static_cast<unsigned char>(c)) && !out.empty()) out += '_';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

StatusOr<Key> ParseKey(const std::string& text, const std::string& format) {
  Key key;
  std::string spec = text;
  size_t colon = spec.find(':');
  std::string attrs = colon == std::string::npos ? "" : spec.substr(colon + 1);
  spec = spec.substr(0, colon);
  for (const char* t : {"basename", "len", "creator"}) {
    const std::string suffix = "." + std::string(t) + "()";
    if (spec.ends_with(suffix)) {
      key.transform = t;
      spec.resize(spec.size() - suffix.size());
    }
  }
  std::string part;
  auto flush = [&]() -> Status {
    if (part.empty()) return FormatError(format, "empty field in key '" + text + "'");
    key.path.push_back(part);
    part.clear();
    return Status::Ok();
  };
  for (size_t i = 0; i < spec.size(); ++i) {
    const char c = spec[i];
    if (c == '.') {
      TY_RETURN_IF_ERROR(flush());
    } else if (c == '[') {
      const size_t close = spec.find(']', i);
      if (close == std::string::npos) return FormatError(format, "unclosed '[' in '" + text + "'");
      if (!part.empty()) TY_RETURN_IF_ERROR(flush());
      key.path.push_back(spec.substr(i, close - i + 1));
      i = close;
      if (i + 1 < spec.size() && spec[i + 1] == '.') ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') {
      part += c;
    } else {
      return FormatError(format, std::string("unexpected '") + c + "' in key '" + text + "'");
    }
  }
  if (!part.empty()) TY_RETURN_IF_ERROR(flush());
  if (key.path.empty()) return FormatError(format, "empty key");
  while (!attrs.empty()) {
    size_t next = attrs.find(':');
    const std::string attr = attrs.substr(0, next);
    attrs = next == std::string::npos ? "" : attrs.substr(next + 1);
    if (attr.starts_with("label=")) {
      key.label = attr.substr(6);
    } else {
      return FormatError(format, "unknown attribute '" + attr + "' (only label=TEXT)");
    }
  }
  if (key.label.empty()) {
    std::string last;
    for (const auto& p : key.path) {
      if (!p.starts_with("[")) last = p;
    }
    key.label = UpperSnake(last);
  }
  return key;
}

// nullopt: `format` is not a projection (json, yaml or a name).
StatusOr<std::optional<Projection>> ParseProjection(const std::string& format) {
  const size_t open = format.find('(');
  if (open == std::string::npos) return std::optional<Projection>();
  Projection p;
  p.kind = format.substr(0, open);
  if (p.kind != "value" && p.kind != "table") {
    return FormatError(format, "only value(...) and table(...) take keys");
  }
  if (format.back() != ')') return FormatError(format, "missing ')'");
  const std::string inner = format.substr(open + 1, format.size() - open - 2);
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    if (comma == std::string::npos) comma = inner.size();
    std::string text = inner.substr(start, comma - start);
    text.erase(
        std::remove_if(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); }),
        text.end());
    if (!text.empty()) {
      TY_ASSIGN_OR_RETURN(Key key, ParseKey(text, format));
      p.keys.push_back(std::move(key));
    }
    start = comma + 1;
  }
  if (p.keys.empty()) return FormatError(format, "no keys");
  return std::optional<Projection>(std::move(p));
}

std::string ValueOf(const json& item, const Key& key) {
  const json* v = &item;
  for (const std::string& p : key.path) {
    if (p.starts_with("[")) {
      const size_t index = std::strtoul(p.c_str() + 1, nullptr, 10);
      if (!v->is_array() || index >= v->size()) return "";
      v = &(*v)[index];
    } else {
      if (!v->is_object() || !v->contains(p)) return "";
      v = &(*v)[p];
    }
  }
  if (key.transform == "creator") return CreatorText(*v);
  if (key.transform == "len") {
    return std::to_string(v->is_array() || v->is_object() ? v->size()
                          : v->is_string()                ? v->get<std::string>().size()
                                                          : 0);
  }
  std::string text = v->is_string() ? v->get<std::string>() : v->is_null() ? "" : v->dump();
  if (key.transform == "basename") text = std::string(spec::LastSegment(text));
  return text;
}

std::string Render(const std::vector<json>& items, const Projection& p) {
  if (p.kind == "value") {
    std::string out;
    for (const json& item : items) {
      std::string line;
      for (size_t i = 0; i < p.keys.size(); ++i) {
        line += (i ? "\t" : "") + ValueOf(item, p.keys[i]);
      }
      out += line + "\n";
    }
    return out;
  }
  std::vector<std::vector<std::string>> rows(1);
  for (const Key& k : p.keys) rows[0].push_back(k.label);
  for (const json& item : items) {
    rows.emplace_back();
    for (const Key& k : p.keys) rows.back().push_back(ValueOf(item, k));
  }
  return AlignColumns(rows);
}

}  // namespace

std::string CreatorText(const json& creator) {
  if (!creator.is_object()) return "";
  if (creator.value("anonymous", false)) return "anonymous";
  for (const char* field : {"owner", "description", "tokenId"}) {
    const auto it = creator.find(field);
    if (it != creator.end() && it->is_string() && !it->get<std::string>().empty()) {
      return it->get<std::string>();
    }
  }
  return "";
}

std::string CreatorLabel(const json& resource) {
  const auto info = resource.find("trainyardInfo");
  if (info == resource.end() || !info->is_object()) return "";
  const auto creator = info->find("creator");
  return creator == info->end() ? "" : CreatorText(*creator);
}

std::string AlignColumns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

Status CheckFormat(const std::string& format, const NamedFormats& named) {
  if (format.empty() || format == "json" || format == "yaml" || format == "table" ||
      named.count(format)) {
    return Status::Ok();
  }
  TY_ASSIGN_OR_RETURN(std::optional<Projection> p, ParseProjection(format));
  if (p) return Status::Ok();
  return FormatError(format, "");
}

StatusOr<std::string> FormatResources(const std::vector<json>& items, const std::string& format,
                                      bool as_list, const NamedFormats& named) {
  if (auto it = named.find(format); it != named.end()) return it->second(items, as_list);
  if (format == "json") {
    if (!as_list && items.size() == 1) return items[0].dump(2) + "\n";
    return json(items).dump(2) + "\n";
  }
  if (format == "table") {
    return FormatResources(items, "table(name.basename():label=ID, displayName, state, createTime)",
                           as_list);
  }
  if (format == "yaml" || format.empty()) {
    if (!as_list && items.size() == 1) return spec::JsonToYaml(items[0]);
    std::string out;
    for (const auto& j : items) out += "---\n" + spec::JsonToYaml(j);
    return out;
  }
  TY_ASSIGN_OR_RETURN(std::optional<Projection> p, ParseProjection(format));
  if (!p) return FormatError(format, "");
  return Render(items, *p);
}

const NamedFormats& CustomJobFormats() {
  static const NamedFormats kFormats = {
      {"table", [](const std::vector<json>& jobs, bool) {
         std::vector<std::vector<std::string>> rows = {
             {"ID", "DISPLAY_NAME", "STATE", "CREATE_TIME", "CREATOR", "EST_COST_USD"}};
         for (const auto& j : jobs) {
           char cost[32] = "";
           if (j.contains("trainyardInfo")) {
             std::snprintf(cost, sizeof cost, "%.4f",
                           j["trainyardInfo"].value("estimatedCostUsd", 0.0));
           }
           rows.push_back({std::string(spec::LastSegment(j.value("name", ""))),
                           j.value("displayName", ""), j.value("state", ""),
                           j.value("createTime", ""), CreatorLabel(j), cost});
         }
         return AlignColumns(rows);
       }}};
  return kFormats;
}

std::string FormatJobs(const std::vector<json>& jobs, const std::string& format, bool as_list) {
  StatusOr<std::string> out = FormatResources(jobs, format, as_list, CustomJobFormats());
  return out.ok() ? *out : out.status().message() + "\n";
}

}  // namespace trainyard::cli
