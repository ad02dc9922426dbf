// The writing half of the proto3-JSON toolkit (reader.h reads): values in their proto3 JSON form
// and an object builder that omits fields at their default value, as proto3 JSON printers do, so
// every resource prints the same way.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/time.h"

namespace trainyard::protojson {

// int64 as proto3 JSON writes it: a decimal string ("-42").
inline nlohmann::json Int64Value(int64_t v) { return std::to_string(v); }
// "1.5s" (common/time.h FormatDuration).
inline nlohmann::json DurationValue(trainyard::Duration d) { return FormatDuration(d); }
// "2026-11-22T02:41:52.123456Z" (common/time.h FormatTimestamp).
inline nlohmann::json TimestampValue(TimePoint t) { return FormatTimestamp(t); }

// Builds one JSON object. Each setter skips the field when the value is the proto3 default
// (empty string, list or map; 0; false; an unset optional) and returns *this for chaining.
class ObjectWriter {
 public:
  ObjectWriter& String(std::string_view name, const std::string& v);
  ObjectWriter& Bool(std::string_view name, bool v);
  ObjectWriter& Int64(std::string_view name, int64_t v);  // written as a string
  ObjectWriter& Int32(std::string_view name, int32_t v);  // written as a number
  ObjectWriter& Strings(std::string_view name, const std::vector<std::string>& v);
  ObjectWriter& StringMap(std::string_view name, const std::map<std::string, std::string>& v);
  ObjectWriter& Duration(std::string_view name, const std::optional<trainyard::Duration>& v);
  ObjectWriter& Timestamp(std::string_view name, const std::optional<TimePoint>& v);
  // A message or list built by the caller; skipped when null or an empty array (an empty
  // object is kept: a set message with default fields).
  ObjectWriter& Value(std::string_view name, nlohmann::json v);

  // The object built so far; moves it out, leaving the writer empty.
  nlohmann::json Build() { return std::exchange(j_, nlohmann::json::object()); }

 private:
  nlohmann::json j_ = nlohmann::json::object();
};

}  // namespace trainyard::protojson
