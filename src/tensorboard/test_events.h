// Test-only: hand-encoded Event protos (the writer side of event_decoder.h's field table), so
// tests can build TF2-style tensor scalars that trainyard-bert never writes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace trainyard::tensorboard::test_events {

inline void Varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
inline void Tag(std::string& out, int field, int type) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | type);
}
inline void Bytes(std::string& out, int field, std::string_view bytes) {
  Tag(out, field, 2);
  Varint(out, bytes.size());
  out.append(bytes);
}
template <typename T>
std::string Raw(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

// Event{wall_time, step, summary{value[...]}} with already-encoded Summary.Value messages.
inline std::string EventWith(double wall_time, int64_t step,
                             std::initializer_list<std::string> values) {
  std::string summary;
  for (const std::string& v : values) Bytes(summary, 1, v);
  std::string event;
  Tag(event, 1, 1);
  event += Raw(wall_time);
  Tag(event, 2, 0);
  Varint(event, static_cast<uint64_t>(step));
  Bytes(event, 5, summary);
  return event;
}

inline std::string SimpleValue(std::string_view tag, float v) {
  std::string out;
  Bytes(out, 1, tag);
  Tag(out, 2, 5);
  out += Raw(v);
  return out;
}

inline std::string PluginMetadata(std::string_view plugin) {
  std::string plugin_data;
  Bytes(plugin_data, 1, plugin);
  std::string metadata;
  Bytes(metadata, 1, plugin_data);
  return metadata;
}

// Summary.Value{tag, tensor, metadata{plugin_data{plugin_name}}}; `tensor` is an encoded
// TensorProto.
inline std::string TensorValue(std::string_view tag, const std::string& tensor,
                               std::string_view plugin) {
  std::string out;
  Bytes(out, 1, tag);
  Bytes(out, 8, tensor);
  if (!plugin.empty()) Bytes(out, 9, PluginMetadata(plugin));
  return out;
}

}  // namespace trainyard::tensorboard::test_events
