#include "model/safetensors.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/file_util.h"

namespace trainyard::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The LibTorch type of a dtype the header parser accepted (FindSafetensorsDtype's list).
torch::ScalarType TorchTypeOf(const SafetensorsDtype& d) {
  static const std::map<std::string, torch::ScalarType> kTypes = {
      {"F64", torch::kFloat64},   {"F32", torch::kFloat32}, {"F16", torch::kFloat16},
      {"BF16", torch::kBFloat16}, {"I64", torch::kInt64},   {"I32", torch::kInt32},
      {"I16", torch::kInt16},     {"I8", torch::kInt8},     {"U8", torch::kUInt8},
      {"BOOL", torch::kBool}};
  return kTypes.at(d.name);
}

torch::Tensor EmptyTensorFor(const SafetensorsEntry& e) {
  return torch::empty(e.shape, torch::TensorOptions().dtype(TorchTypeOf(*e.dtype)));
}

StatusOr<const SafetensorsDtype*> InfoFor(torch::ScalarType type) {
  for (const char* name : {"F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL"}) {
    const SafetensorsDtype* d = FindSafetensorsDtype(name);
    if (TorchTypeOf(*d) == type) return d;
  }
  return InvalidArgumentError(std::string("dtype ") + c10::toString(type) +
                              " cannot be stored in safetensors by this writer");
}

}  // namespace

StatusOr<SafetensorsFile> ParseSafetensors(std::string_view bytes) {
  TY_ASSIGN_OR_RETURN(uint64_t n, SafetensorsHeaderLength(bytes.substr(0, 8), bytes.size()));
  TY_ASSIGN_OR_RETURN(SafetensorsHeader header,
                      ParseSafetensorsHeader(bytes.substr(8, n), bytes.size() - 8 - n));
  SafetensorsFile out;
  out.metadata = std::move(header.metadata);
  const char* data = bytes.data() + 8 + n;
  for (auto& e : header.entries) {
    auto t = EmptyTensorFor(e);
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
  char len_bytes[8] = {};
  in.read(len_bytes, file_size < 8 ? 0 : 8);
  auto length = SafetensorsHeaderLength(std::string_view(len_bytes, 8), file_size);
  if (!length.ok()) return fail(length.status());
  const uint64_t n = *length;
  std::string text(n, '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  if (!in) return IoError("cannot read " + path.string());
  auto header = ParseSafetensorsHeader(text, file_size - 8 - n);
  if (!header.ok()) return fail(header.status());
  // Tensors are read straight into their storage: no second copy of a large checkpoint.
  SafetensorsFile out;
  out.metadata = std::move(header->metadata);
  for (auto& e : header->entries) {
    auto t = EmptyTensorFor(e);
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
