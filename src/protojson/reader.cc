#include "protojson/reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/parse.h"

namespace trainyard::protojson {
namespace {

// Largest integer a double holds exactly: an integral float beyond it may not be the number the
// client wrote.
constexpr double kMaxExactDouble = 9007199254740992.0;  // 2^53

StatusOr<int64_t> ReadIntegral(const json& v, const std::string& path, std::string_view type,
                               int64_t min, int64_t max) {
  std::optional<int64_t> value;
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      value = v.get<int64_t>();
    }
  } else if (v.is_number_integer()) {
    value = v.get<int64_t>();
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) <= kMaxExactDouble) {
      value = static_cast<int64_t>(d);
    }
  } else if (v.is_string()) {
    value = ParseInt64(v.get_ref<const std::string&>());
  }
  if (!value || *value < min || *value > max) return InvalidValueError(path, type, v);
  return *value;
}

}  // namespace

std::string JoinPath(std::string_view path, std::string_view field) {
  return path.empty() ? std::string(field) : std::string(path) + "." + std::string(field);
}

std::string IndexPath(std::string_view path, size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

std::string SnakeToCamel(std::string_view name) {
  std::string out;
  bool upper = false;
  for (char c : name) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

std::string CamelToSnake(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

std::string Brief(const json& value) {
  std::string s = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

Status InvalidValueError(std::string_view path, std::string_view type, const json& value,
                         std::string_view hint) {
  std::string msg =
      "Invalid value at '" + std::string(path) + "' (" + std::string(type) + "), " + Brief(value);
  if (!hint.empty()) msg += ": " + std::string(hint);
  return InvalidArgumentError(msg).WithFieldViolation(std::string(path), msg);
}

Status UnknownFieldError(std::string_view where, std::string_view key) {
  // As Google's front ends: the violation names the message holding the unknown key (the key
  // itself at the top level), the description is the whole message.
  std::string msg = "Invalid JSON payload received. Unknown name \"" + std::string(key) +
                    "\" at '" + std::string(where) + "': Cannot find field.";
  return InvalidArgumentError(msg).WithFieldViolation(
      where.empty() ? std::string(key) : std::string(where), msg);
}

Status UnknownQueryParameterError(std::string_view key) {
  const std::string k(key);
  return InvalidArgumentError("Invalid JSON payload received. Unknown name \"" + k +
                              "\": Cannot bind query parameter. Field '" + k +
                              "' could not be found in request message.")
      .WithFieldViolation(k, "unknown query parameter");
}

Status FieldError(std::string_view path, std::string_view message) {
  return InvalidFieldError(std::string(path), std::string(message));
}

StatusOr<std::string> ReadString(const json& v, const std::string& path) {
  if (!v.is_string()) return InvalidValueError(path, "TYPE_STRING", v);
  return v.get<std::string>();
}

StatusOr<bool> ReadBool(const json& v, const std::string& path) {
  if (!v.is_boolean()) return InvalidValueError(path, "TYPE_BOOL", v);
  return v.get<bool>();
}

StatusOr<int64_t> ReadInt64(const json& v, const std::string& path) {
  return ReadIntegral(v, path, "TYPE_INT64", std::numeric_limits<int64_t>::min(),
                      std::numeric_limits<int64_t>::max());
}

StatusOr<int32_t> ReadInt32(const json& v, const std::string& path) {
  TY_ASSIGN_OR_RETURN(int64_t value,
                      ReadIntegral(v, path, "TYPE_INT32", std::numeric_limits<int32_t>::min(),
                                   std::numeric_limits<int32_t>::max()));
  return static_cast<int32_t>(value);
}

StatusOr<double> ReadDouble(const json& v, const std::string& path) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    double d = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    // from_chars also reads "inf"/"nan"; proto3 spells those only as above.
    if (!s.empty() && ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(d)) {
      return d;
    }
  }
  return InvalidValueError(path, "TYPE_DOUBLE", v);
}

StatusOr<Duration> ReadDuration(const json& v, const std::string& path) {
  if (v.is_string()) {
    StatusOr<Duration> d = ParseDuration(v.get_ref<const std::string&>());
    if (d.ok()) return *d;
  }
  return InvalidValueError(path, "google.protobuf.Duration", v,
                           "expected seconds with an 's' suffix, e.g. \"3600s\" or \"1.5s\"");
}

StatusOr<TimePoint> ReadTimestamp(const json& v, const std::string& path) {
  if (v.is_string()) {
    StatusOr<TimePoint> t = ParseTimestamp(v.get_ref<const std::string&>());
    if (t.ok()) return *t;
  }
  return InvalidValueError(path, "google.protobuf.Timestamp", v,
                           "expected an RFC 3339 time, e.g. \"2021-05-18T00:00:00Z\"");
}

StatusOr<ObjectReader> ObjectReader::Open(const json& j, const std::string& path,
                                          std::initializer_list<std::string_view> known,
                                          std::initializer_list<std::string_view> ignored,
                                          std::string_view root_label) {
  ObjectReader r;
  r.path_ = path;
  r.where_ = path.empty() ? std::string(root_label) : path;
  if (!j.is_object()) return InvalidValueError(r.where_, "object", j, "expected a JSON object");
  for (const auto& [key, value] : j.items()) {
    std::string camel = SnakeToCamel(key);
    bool is_known = std::find(known.begin(), known.end(), camel) != known.end();
    bool is_ignored = std::find(ignored.begin(), ignored.end(), camel) != ignored.end();
    if (!is_known && !is_ignored) return UnknownFieldError(r.where_, key);
    if (r.values_.count(camel)) {
      return InvalidArgumentError("Invalid JSON payload received. Field '" + r.PathOf(camel) +
                                  "' is given twice (as \"" + camel +
                                  "\" and its snake_case form).");
    }
    // Ignored fields are remembered as absent so that both spellings still count as twice.
    r.values_[camel] = is_known && !value.is_null() ? &value : nullptr;
  }
  return r;
}

const json* ObjectReader::Get(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : it->second;
}

Status ObjectReader::String(std::string_view name, std::string* out) const {
  return Field(name, out, ReadString);
}

Status ObjectReader::Bool(std::string_view name, bool* out) const {
  return Field(name, out, ReadBool);
}

Status ObjectReader::Int64(std::string_view name, int64_t* out) const {
  return Field(name, out, ReadInt64);
}

Status ObjectReader::Int32(std::string_view name, int32_t* out) const {
  return Field(name, out, ReadInt32);
}

Status ObjectReader::Double(std::string_view name, double* out) const {
  return Field(name, out, ReadDouble);
}

Status ObjectReader::Duration(std::string_view name,
                              std::optional<trainyard::Duration>* out) const {
  return Field(name, out, ReadDuration);
}

Status ObjectReader::Timestamp(std::string_view name, std::optional<TimePoint>* out) const {
  return Field(name, out, ReadTimestamp);
}

Status ObjectReader::Strings(std::string_view name, std::vector<std::string>* out) const {
  return Repeated(name, out, ReadString);
}

Status ObjectReader::StringMap(std::string_view name,
                               std::map<std::string, std::string>* out) const {
  const json* v = Get(name);
  if (!v) return Status::Ok();
  if (!v->is_object()) {
    return InvalidValueError(PathOf(name), "map<string, string>", *v, "expected a JSON object");
  }
  for (const auto& [key, value] : v->items()) {
    TY_ASSIGN_OR_RETURN((*out)[key], ReadString(value, JoinPath(PathOf(name), key)));
  }
  return Status::Ok();
}

Status ObjectReader::Require(std::string_view name, std::string_view hint) const {
  if (Has(name)) return Status::Ok();
  return FieldError(PathOf(name), hint.empty() ? "required" : "required; " + std::string(hint));
}

Status ObjectReader::RejectIfSet(std::string_view name, std::string_view fix) const {
  const json* v = Get(name);
  if (!v || (v->is_array() && v->empty())) return Status::Ok();
  return FieldError(PathOf(name), "not supported by Trainyard; " + std::string(fix));
}

}  // namespace trainyard::protojson
