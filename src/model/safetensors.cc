#include "model/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "common/file_util.h"
#include "common/json_parse.h"

namespace trainyard::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; big-endian hosts would need byte swapping");

struct DtypeInfo {
  const char* name;
  torch::ScalarType type;
  int64_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {"F64", torch::kFloat64, 8},   {"F32", torch::kFloat32, 4}, {"F16", torch::kFloat16, 2},
    {"BF16", torch::kBFloat16, 2}, {"I64", torch::kInt64, 8},   {"I32", torch::kInt32, 4},
    {"I16", torch::kInt16, 2},     {"I8", torch::kInt8, 1},     {"U8", torch::kUInt8, 1},
    {"BOOL", torch::kBool, 1},
};
// Valid in the format but with no LibTorch 1.13 tensor type.
const std::set<std::string> kKnownUnsupported = {"F8_E5M2",     "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ",
                                                 "F8_E5M2FNUZ", "U16",     "U32",     "U64",
                                                 "C64",         "F4",      "F6_E2M3", "F6_E3M2"};

struct Entry {
  std::string name;
  torch::ScalarType type;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  std::vector<Entry> entries;  // sorted by offsets
  std::map<std::string, std::string> metadata;
};

uint64_t ReadLe64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

Status Bad(std::string_view what) { return InvalidArgumentError(std::string(what)); }

StatusOr<Entry> ParseEntry(const std::string& name, const json& info) {
  auto where = "tensor \"" + name + "\": ";
  if (!info.is_object()) return Bad(where + "header entry must be an object");
  auto dtype_it = info.find("dtype");
  if (dtype_it == info.end() || !dtype_it->is_string()) {
    return Bad(where + "\"dtype\" missing or not a string");
  }
  const std::string dtype = dtype_it->get<std::string>();
  const DtypeInfo* dt = nullptr;
  for (const auto& d : kDtypes) {
    if (dtype == d.name) dt = &d;
  }
  if (dt == nullptr) {
    if (kKnownUnsupported.count(dtype)) {
      return Status(StatusCode::kUnimplemented,
                    where + "dtype " + dtype + " is not supported by this reader");
    }
    return Bad(where + "unknown dtype \"" + dtype + "\"");
  }
  Entry e;
  e.name = name;
  e.type = dt->type;
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

// Parses and validates the JSON header against a data buffer of `buffer_size` bytes.
StatusOr<Header> ParseHeader(std::string_view text, uint64_t buffer_size) {
  if (text.empty() || text.front() != '{') return Bad("header is not a JSON object");
  StatusOr<json> parsed = ParseJson(text, {.reject_duplicate_keys = true});
  if (!parsed.ok()) return Bad("header is not valid JSON: " + parsed.status().message());
  const json& root = *parsed;
  if (!root.is_object()) return Bad("header is not a JSON object");
  Header header;
  for (const auto& [name, info] : root.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) return Bad("__metadata__ must be an object of strings");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) return Bad("__metadata__: value of \"" + k + "\" must be a string");
        header.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    TY_ASSIGN_OR_RETURN(Entry e, ParseEntry(name, info));
    header.entries.push_back(std::move(e));
  }
  std::sort(header.entries.begin(), header.entries.end(), [](const Entry& a, const Entry& b) {
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

StatusOr<const DtypeInfo*> InfoFor(torch::ScalarType type) {
  for (const auto& d : kDtypes) {
    if (d.type == type) return &d;
  }
  return InvalidArgumentError(std::string("dtype ") + c10::toString(type) +
                              " cannot be stored in safetensors by this writer");
}

}  // namespace

StatusOr<SafetensorsFile> ParseSafetensors(std::string_view bytes) {
  if (bytes.size() < 8) {
    return Bad("file is " + std::to_string(bytes.size()) +
               " bytes, shorter than the 8-byte header length");
  }
  uint64_t n = ReadLe64(bytes.data());
  if (n > kSafetensorsMaxHeaderSize) {
    return Bad("header length " + std::to_string(n) + " exceeds the limit of " +
               std::to_string(kSafetensorsMaxHeaderSize) + " bytes");
  }
  if (n > bytes.size() - 8) {
    return Bad("header length " + std::to_string(n) + " runs past the end of the file (" +
               std::to_string(bytes.size()) + " bytes)");
  }
  TY_ASSIGN_OR_RETURN(Header header, ParseHeader(bytes.substr(8, n), bytes.size() - 8 - n));
  SafetensorsFile out;
  out.metadata = std::move(header.metadata);
  const char* data = bytes.data() + 8 + n;
  for (auto& e : header.entries) {
    auto t = torch::empty(e.shape, torch::TensorOptions().dtype(e.type));
    if (e.end > e.begin) std::memcpy(t.data_ptr(), data + e.begin, e.end - e.begin);
    out.tensors.emplace(e.name, std::move(t));
  }
  return out;
}

StatusOr<SafetensorsFile> ReadSafetensorsFile(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFoundError("file not found: " + path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open " + path.string());
  const uint64_t file_size = fs::file_size(path, ec);
  if (ec) return IoError("cannot stat " + path.string() + ": " + ec.message());
  auto fail = [&](const Status& s) { return s.WithPrefix(path.string()); };
  if (file_size < 8) {
    return fail(Bad("file is " + std::to_string(file_size) +
                    " bytes, shorter than the 8-byte header length"));
  }
  char len_bytes[8];
  in.read(len_bytes, 8);
  const uint64_t n = ReadLe64(len_bytes);
  if (n > kSafetensorsMaxHeaderSize) {
    return fail(Bad("header length " + std::to_string(n) + " exceeds the limit of " +
                    std::to_string(kSafetensorsMaxHeaderSize) + " bytes"));
  }
  if (n > file_size - 8) {
    return fail(Bad("header length " + std::to_string(n) + " runs past the end of the file (" +
                    std::to_string(file_size) + " bytes)"));
  }
  std::string text(n, '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  if (!in) return IoError("cannot read " + path.string());
  auto header = ParseHeader(text, file_size - 8 - n);
  if (!header.ok()) return fail(header.status());
  // Tensors are read straight into their storage: no second copy of a large checkpoint.
  SafetensorsFile out;
  out.metadata = std::move(header->metadata);
  for (auto& e : header->entries) {
    auto t = torch::empty(e.shape, torch::TensorOptions().dtype(e.type));
    if (e.end > e.begin) {
      in.seekg(static_cast<std::streamoff>(8 + n + e.begin));
      in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(e.end - e.begin));
      if (!in) return IoError("cannot read tensor \"" + e.name + "\" from " + path.string());
    }
    out.tensors.emplace(e.name, std::move(t));
  }
  return out;
}

StatusOr<std::map<std::string, torch::Tensor>> ReadSafetensors(const fs::path& path) {
  TY_ASSIGN_OR_RETURN(SafetensorsFile file, ReadSafetensorsFile(path));
  return std::move(file.tensors);
}

StatusOr<std::string> SerializeSafetensors(const std::map<std::string, torch::Tensor>& tensors,
                                           const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<torch::Tensor> cpu;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name.empty() || name == "__metadata__") {
      return InvalidArgumentError("safetensors: invalid tensor name \"" + name + "\"");
    }
    if (!tensor.defined()) {
      return InvalidArgumentError("safetensors: tensor \"" + name + "\" is undefined");
    }
    auto info = InfoFor(tensor.scalar_type());
    if (!info.ok()) return info.status().WithPrefix("safetensors: tensor \"" + name + "\"");
    auto t = tensor.detach().to(torch::kCPU).contiguous();
    const uint64_t nbytes = static_cast<uint64_t>(t.numel()) * (*info)->size;
    header[name] = {{"dtype", (*info)->name},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    cpu.push_back(std::move(t));
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  std::string out;
  out.reserve(8 + text.size() + offset);
  const uint64_t n = text.size();
  char len_bytes[8];
  std::memcpy(len_bytes, &n, 8);
  out.append(len_bytes, 8);
  out += text;
  for (const auto& t : cpu) {
    out.append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
  }
  return out;
}

Status WriteSafetensors(const fs::path& path, const std::map<std::string, torch::Tensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  TY_ASSIGN_OR_RETURN(std::string bytes, SerializeSafetensors(tensors, metadata));
  return WriteFileAtomic(path, bytes);
}

}  // namespace trainyard::model
