// The proto3-JSON toolkit every resource codec is written with (CustomJob in spec/, StudySpec,
// Trial and HyperparameterTuningJob in tuning/, the --config YAML in spec/): one set of number,
// time and enum rules, one unknown-field policy and one error wording.
//
// Rules (https://protobuf.dev/programming-guides/json/, as Vertex's REST front end applies them):
// - Field names: lowerCamelCase; the original snake_case name is accepted too; `null` = not set.
// - Unknown fields are REJECTED with their location, like Google's API front ends; a field the
//   codec lists as "ignored" (e.g. output-only fields in a create request) is accepted and skipped.
// - int32/int64: a JSON number with an integral value (|v| <= 2^53 when written as a float) or a
//   decimal string; writers emit int64 as a string, int32 as a number.
// - double: a JSON number, a numeric string, or "NaN", "Infinity", "-Infinity".
// - bool: true or false only.
// - enums: the value's name or its number.
// - Duration: "3600s", "1.5s" (common/time.h); Timestamp: RFC 3339 (common/time.h).
//
// Error wording (INVALID_ARGUMENT), the same for every resource:
//   Invalid value at 'jobSpec.workerPoolSpecs[1].replicaCount' (TYPE_INT64), "two"
//   Invalid value at 'studySpec.algorithm' (google.cloud.aiplatform.v1.StudySpec.Algorithm),
//     "HYPERBAND": expected one of ALGORITHM_UNSPECIFIED, GRID_SEARCH, RANDOM_SEARCH
//   Invalid JSON payload received. Unknown name "replicaCnt" at 'jobSpec.workerPoolSpecs[0]':
//     Cannot find field.
//   studySpec.metrics[0].goal: required; use MAXIMIZE or MINIMIZE       (FieldError: meaning)
// The first two are Google's own wording (a client that matches on it keeps working); the
// optional ": <hint>" tells the user the fix where the type name alone does not.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace trainyard::protojson {

using nlohmann::json;

// ---- Paths and errors -------------------------------------------------------------------------

// "a.b" (or "b" when `path` is empty) and "a[3]".
std::string JoinPath(std::string_view path, std::string_view field);
std::string IndexPath(std::string_view path, size_t index);
// "parent_int_values" -> "parentIntValues".
std::string SnakeToCamel(std::string_view name);
// "parentIntValues" -> "parent_int_values".
std::string CamelToSnake(std::string_view name);
// `value` as compact JSON, cut to 60 characters.
std::string Brief(const json& value);

// Invalid value at '<path>' (<type>), <value>[: <hint>]
Status InvalidValueError(std::string_view path, std::string_view type, const json& value,
                         std::string_view hint = "");
// Invalid JSON payload received. Unknown name "<key>" at '<where>': Cannot find field.
Status UnknownFieldError(std::string_view where, std::string_view key);
// A query parameter no field binds to, in Google's words ("Cannot bind query parameter").
Status UnknownQueryParameterError(std::string_view key);
// <path>: <message>  (a value of the right type that breaks a rule: required, oneof, unsupported)
Status FieldError(std::string_view path, std::string_view message);

// ---- Values -----------------------------------------------------------------------------------
// Each reads one JSON value at `path` (used in errors) or returns InvalidValueError.

StatusOr<std::string> ReadString(const json& v, const std::string& path);
StatusOr<bool> ReadBool(const json& v, const std::string& path);
StatusOr<int64_t> ReadInt64(const json& v, const std::string& path);
StatusOr<int32_t> ReadInt32(const json& v, const std::string& path);
StatusOr<double> ReadDouble(const json& v, const std::string& path);
StatusOr<Duration> ReadDuration(const json& v, const std::string& path);
StatusOr<TimePoint> ReadTimestamp(const json& v, const std::string& path);

// One value of a proto enum: its name, its number and the C++ value it maps to.
template <typename E>
struct EnumEntry {
  std::string_view name;
  int number;
  E value;
};

// The enum values a codec accepts, with the proto type name used in errors
// ("google.cloud.aiplatform.v1.StudySpec.Algorithm").
template <typename E>
struct EnumType {
  std::string_view type_name;
  std::span<const EnumEntry<E>> entries;

  // The entry's name; "" for a value not in the table.
  std::string_view NameOf(E value) const {
    for (const auto& e : entries) {
      if (e.value == value) return e.name;
    }
    return "";
  }
  std::string Names() const {
    std::string list;
    for (const auto& e : entries) list += (list.empty() ? "" : ", ") + std::string(e.name);
    return list;
  }
};

// The enum by name ("GRID_SEARCH") or by number (2).
template <typename E>
StatusOr<E> ReadEnum(const json& v, const std::string& path, const EnumType<E>& type) {
  for (const auto& e : type.entries) {
    if ((v.is_string() && v.get_ref<const std::string&>() == e.name) ||
        (v.is_number_integer() && v.get<int64_t>() == e.number)) {
      return e.value;
    }
  }
  return InvalidValueError(path, type.type_name, v, "expected one of " + type.Names());
}

// A repeated field: `read_one(const json&, const std::string& path) -> StatusOr<T>` per element.
template <typename T, typename F>
StatusOr<std::vector<T>> ReadRepeated(const json& v, const std::string& path, F read_one) {
  if (!v.is_array()) return InvalidValueError(path, "repeated", v, "expected a JSON array");
  std::vector<T> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    TY_ASSIGN_OR_RETURN(T item, read_one(v[i], IndexPath(path, i)));
    out.push_back(std::move(item));
  }
  return out;
}

// ---- Messages ---------------------------------------------------------------------------------

// The fields of one JSON object, checked against the message's field list. Each typed getter
// leaves `*out` untouched when the field is absent or null and returns OK; otherwise it decodes
// the value or returns the error for it. Holds pointers into the json it was opened on, which
// must outlive it.
class ObjectReader {
 public:
  // Opens `j` at `path` ("" for a document's root, then named `root_label` in errors). Errors:
  // `j` not an object; a key that is neither in `known` nor in `ignored`; a field given in both
  // spellings.
  static StatusOr<ObjectReader> Open(const json& j, const std::string& path,
                                     std::initializer_list<std::string_view> known,
                                     std::initializer_list<std::string_view> ignored = {},
                                     std::string_view root_label = "");

  // The value of a known field, nullptr when absent or null.
  const json* Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Get(name) != nullptr; }
  // The path of a field ("jobSpec.scheduling.timeout").
  std::string PathOf(std::string_view name) const { return JoinPath(path_, name); }
  // This object's path, or the root label for a root.
  const std::string& where() const { return where_; }

  Status String(std::string_view name, std::string* out) const;
  Status Bool(std::string_view name, bool* out) const;
  Status Int64(std::string_view name, int64_t* out) const;
  Status Int32(std::string_view name, int32_t* out) const;
  Status Double(std::string_view name, double* out) const;
  Status Duration(std::string_view name, std::optional<trainyard::Duration>* out) const;
  Status Timestamp(std::string_view name, std::optional<TimePoint>* out) const;
  Status Strings(std::string_view name, std::vector<std::string>* out) const;
  Status StringMap(std::string_view name, std::map<std::string, std::string>* out) const;

  template <typename E>
  Status Enum(std::string_view name, const EnumType<E>& type, E* out) const {
    return Field(name, out, [&type](const json& v, const std::string& path) {
      return ReadEnum(v, path, type);
    });
  }
  template <typename T, typename F>
  Status Repeated(std::string_view name, std::vector<T>* out, F read_one) const {
    return Field(name, out, [&read_one](const json& v, const std::string& path) {
      return ReadRepeated<T>(v, path, read_one);
    });
  }
  // A nested message: `read(const json&, const std::string& path) -> StatusOr<T>`.
  template <typename T, typename F>
  Status Message(std::string_view name, std::optional<T>* out, F read) const {
    return Field(name, out, read);
  }

  // FieldError "<path>: required[; <hint>]" when the field is absent, OK otherwise.
  Status Require(std::string_view name, std::string_view hint = "") const;
  // FieldError "<path>: not supported by Trainyard; <fix>" when the field is set (an empty array
  // counts as not set, as proto3 writers emit one for an empty repeated field).
  Status RejectIfSet(std::string_view name, std::string_view fix) const;

 private:
  // Decodes field `name` with `read(const json&, const std::string& path) -> StatusOr<...>` into
  // *out; leaves *out alone when the field is absent.
  template <typename T, typename F>
  Status Field(std::string_view name, T* out, F read) const {
    const json* v = Get(name);
    if (!v) return Status::Ok();
    TY_ASSIGN_OR_RETURN(*out, read(*v, PathOf(name)));
    return Status::Ok();
  }

  std::string path_;
  std::string where_;
  std::map<std::string, const json*, std::less<>> values_;
};

}  // namespace trainyard::protojson
