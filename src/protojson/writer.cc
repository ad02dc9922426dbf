#include "protojson/writer.h"

namespace trainyard::protojson {

ObjectWriter& ObjectWriter::String(std::string_view name, const std::string& v) {
  if (!v.empty()) j_[std::string(name)] = v;
  return *this;
}

ObjectWriter& ObjectWriter::Bool(std::string_view name, bool v) {
  if (v) j_[std::string(name)] = true;
  return *this;
}

ObjectWriter& ObjectWriter::Int64(std::string_view name, int64_t v) {
  if (v != 0) j_[std::string(name)] = Int64Value(v);
  return *this;
}

ObjectWriter& ObjectWriter::Int32(std::string_view name, int32_t v) {
  if (v != 0) j_[std::string(name)] = v;
  return *this;
}

ObjectWriter& ObjectWriter::Strings(std::string_view name, const std::vector<std::string>& v) {
  if (!v.empty()) j_[std::string(name)] = v;
  return *this;
}

ObjectWriter& ObjectWriter::StringMap(std::string_view name,
                                      const std::map<std::string, std::string>& v) {
  if (!v.empty()) j_[std::string(name)] = v;
  return *this;
}

ObjectWriter& ObjectWriter::Duration(std::string_view name,
                                     const std::optional<trainyard::Duration>& v) {
  if (v) j_[std::string(name)] = DurationValue(*v);
  return *this;
}

ObjectWriter& ObjectWriter::Timestamp(std::string_view name, const std::optional<TimePoint>& v) {
  if (v) j_[std::string(name)] = TimestampValue(*v);
  return *this;
}

ObjectWriter& ObjectWriter::Value(std::string_view name, nlohmann::json v) {
  if (!v.is_null() && !(v.is_array() && v.empty())) j_[std::string(name)] = std::move(v);
  return *this;
}

}  // namespace trainyard::protojson
