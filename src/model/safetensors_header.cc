#include "model/safetensors_header.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "common/json_parse.h"

namespace trainyard::model {
namespace {

using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; big-endian hosts would need byte swapping");

constexpr SafetensorsDtype kDtypes[] = {
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
    {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1},
};
// Valid in the format but with no LibTorch 1.13 tensor type.
const std::set<std::string> kKnownUnsupported = {"F8_E5M2",     "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ",
                                                 "F8_E5M2FNUZ", "U16",     "U32",     "U64",
                                                 "C64",         "F4",      "F6_E2M3", "F6_E3M2"};

Status Bad(std::string_view what) { return InvalidArgumentError(std::string(what)); }

StatusOr<SafetensorsEntry> ParseEntry(const std::string& name, const json& info) {
  auto where = "tensor \"" + name + "\": ";
  if (!info.is_object()) return Bad(where + "header entry must be an object");
  auto dtype_it = info.find("dtype");
  if (dtype_it == info.end() || !dtype_it->is_string()) {
    return Bad(where + "\"dtype\" missing or not a string");
  }
  const std::string dtype = dtype_it->get<std::string>();
  const SafetensorsDtype* dt = FindSafetensorsDtype(dtype);
  if (dt == nullptr) {
    if (kKnownUnsupported.count(dtype)) {
      return Status(StatusCode::kUnimplemented,
                    where + "dtype " + dtype + " is not supported by this reader");
    }
    return Bad(where + "unknown dtype \"" + dtype + "\"");
  }
  SafetensorsEntry e;
  e.name = name;
  e.dtype = dt;
  auto shape_it = info.find("shape");
  if (shape_it == info.end() || !shape_it->is_array()) return Bad(where + "\"shape\" missing");
  uint64_t numel = 1;
  for (const auto& dim : *shape_it) {
    if (!dim.is_number_unsigned()) return Bad(where + "shape entries must be integers >= 0");
    uint64_t d = dim.get<uint64_t>();
    if (d > (uint64_t{1} << 62) || __builtin_mul_overflow(numel, d, &numel)) {
      return Bad(where + "shape is too large");
    }
    e.shape.push_back(static_cast<int64_t>(d));
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(dt->size), &nbytes)) {
    return Bad(where + "shape is too large");
  }
  auto off_it = info.find("data_offsets");
  if (off_it == info.end() || !off_it->is_array() || off_it->size() != 2 ||
      !(*off_it)[0].is_number_unsigned() || !(*off_it)[1].is_number_unsigned()) {
    return Bad(where + "\"data_offsets\" must be [begin, end] (non-negative integers)");
  }
  e.begin = (*off_it)[0].get<uint64_t>();
  e.end = (*off_it)[1].get<uint64_t>();
  if (e.end < e.begin) {
    return Bad(where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
               "] end before begin");
  }
  if (e.end - e.begin != nbytes) {
    return Bad(where + "data_offsets span " + std::to_string(e.end - e.begin) +
               " bytes but dtype " + dtype + " x shape needs " + std::to_string(nbytes));
  }
  return e;
}

}  // namespace

StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view text, uint64_t buffer_size) {
  if (text.empty() || text.front() != '{') return Bad("header is not a JSON object");
  StatusOr<json> parsed = ParseJson(text, {.reject_duplicate_keys = true});
  if (!parsed.ok()) return Bad("header is not valid JSON: " + parsed.status().message());
  const json& root = *parsed;
  if (!root.is_object()) return Bad("header is not a JSON object");
  SafetensorsHeader header;
  for (const auto& [name, info] : root.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) return Bad("__metadata__ must be an object of strings");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) return Bad("__metadata__: value of \"" + k + "\" must be a string");
        header.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    TY_ASSIGN_OR_RETURN(SafetensorsEntry e, ParseEntry(name, info));
    header.entries.push_back(std::move(e));
  }
  std::sort(header.entries.begin(), header.entries.end(),
            [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
              return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
            });
  uint64_t expected = 0;
  for (const auto& e : header.entries) {
    if (e.begin != expected) {
      return Bad("tensor \"" + e.name + "\": data_offsets [" + std::to_string(e.begin) + ", " +
                 std::to_string(e.end) + "] " +
                 (e.begin < expected ? "overlap the previous tensor" : "leave a gap") +
                 " (expected begin " + std::to_string(expected) + ")");
    }
    expected = e.end;
  }
  if (expected != buffer_size) {
    return Bad("tensor data takes " + std::to_string(expected) + " bytes but the file holds " +
               std::to_string(buffer_size) + " after the header" +
               (expected > buffer_size ? " (truncated file or offsets out of range)" : ""));
  }
  return header;
}

const SafetensorsDtype* FindSafetensorsDtype(std::string_view name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

StatusOr<uint64_t> SafetensorsHeaderLength(std::string_view first8, uint64_t file_size) {
  if (file_size < 8 || first8.size() < 8) {
    return Bad("file is " + std::to_string(file_size) +
               " bytes, shorter than the 8-byte header length");
  }
  uint64_t n;
  std::memcpy(&n, first8.data(), 8);
  if (n > kSafetensorsMaxHeaderSize) {
    return Bad("header length " + std::to_string(n) + " exceeds the limit of " +
               std::to_string(kSafetensorsMaxHeaderSize) + " bytes");
  }
  if (n > file_size - 8) {
    return Bad("header length " + std::to_string(n) + " runs past the end of the file (" +
               std::to_string(file_size) + " bytes)");
  }
  return n;
}

}  // namespace trainyard::model
