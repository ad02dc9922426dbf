#include "common/json_parse.h"

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainyard {
namespace {

using nlohmann::json;

// Builds the DOM through nlohmann's own SAX DOM builder and refuses, before descending, any
// array or object that would exceed the depth limit. Returning false from a SAX event makes
// json::sax_parse stop at once, so the remaining text is never read.
class DepthLimitedBuilder {
 public:
  DepthLimitedBuilder(json& root, const JsonLimits& limits)
      : dom_(root, /*allow_exceptions=*/false), limits_(limits) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool key(json::string_t& v) {
    if (limits_.reject_duplicate_keys && !keys_.back().insert(v).second) {
      error_ = "duplicate key \"" + v + "\" in a JSON object";
      return false;
    }
    return dom_.key(v);
  }
  bool start_object(std::size_t n) {
    if (limits_.reject_duplicate_keys) keys_.emplace_back();
    return Enter() && dom_.start_object(n);
  }
  bool end_object() {
    if (limits_.reject_duplicate_keys) keys_.pop_back();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = e.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ > limits_.max_depth) {
      too_deep_ = true;
      return false;
    }
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const JsonLimits& limits_;
  std::vector<std::set<std::string>> keys_;  // keys seen per open object (duplicate check)
  int depth_ = 0;
  bool too_deep_ = false;
  std::string error_;
};

}  // namespace

StatusOr<json> ParseJson(std::string_view text, JsonLimits limits) {
  if (text.size() > limits.max_bytes) {
    return InvalidArgumentError("JSON text of " + std::to_string(text.size()) +
                                " bytes exceeds the limit of " + std::to_string(limits.max_bytes) +
                                " bytes");
  }
  json root;
  DepthLimitedBuilder builder(root, limits);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const std::exception& e) {
    // The DOM builder throws only for sizes beyond max_size(); report it like a parse error.
    return InvalidArgumentError(std::string("invalid JSON: ") + e.what());
  }
  if (builder.too_deep()) {
    return InvalidArgumentError("JSON nests arrays/objects deeper than " +
                                std::to_string(limits.max_depth) +
                                " levels; flatten the value (the limit is protobuf's)");
  }
  if (!ok) {
    const std::string& why = builder.error();
    if (why.rfind("duplicate key", 0) == 0) return InvalidArgumentError(why);
    return InvalidArgumentError(why.empty() ? std::string("invalid JSON") : "invalid JSON: " + why);
  }
  return root;
}

json ParseJsonOrThrow(std::string_view text, JsonLimits limits) {
  StatusOr<json> parsed = ParseJson(text, limits);
  if (!parsed.ok()) throw std::invalid_argument(parsed.status().message());
  return std::move(*parsed);
}

Status CheckJsonKeys(const nlohmann::json& j, const std::string& where,
                     std::initializer_list<const char*> allowed) {
  if (!j.is_object()) return InvalidArgumentError(where + ": expected a JSON object");
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* a : allowed) known |= key == a;
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return InvalidArgumentError(where + ": unknown key '" + key + "' (expected " + list + ")");
    }
  }
  return Status::Ok();
}

}  // namespace trainyard
