// The safetensors header (huggingface/safetensors), parsed and checked without LibTorch: the part
// of a checkpoint that is hostile input (sizes, offsets, shapes, JSON). safetensors.h turns a
// checked header into tensors; the fuzzer (fuzz/safetensors_fuzzer.cc) runs this part alone.
//
// Checks, as the reference implementation: N <= 100,000,000 and within the file; the header is a
// JSON object without duplicate names; each dtype is known; (END - BEGIN) == numel * element
// size, without overflow; the offsets, in order, tile the buffer from 0 without gaps or overlaps.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::model {

inline constexpr uint64_t kSafetensorsMaxHeaderSize = 100'000'000;

// A dtype this reader materializes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL.
struct SafetensorsDtype {
  const char* name;
  int64_t size;  // bytes per element
};
// nullptr when `name` is not one of them.
const SafetensorsDtype* FindSafetensorsDtype(std::string_view name);

struct SafetensorsEntry {
  std::string name;
  const SafetensorsDtype* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // in the data buffer, END exclusive
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // sorted by offsets
  std::map<std::string, std::string> metadata;
};

// The header length N from the file's first 8 bytes (`first8`, little-endian), checked against
// the limit and the file size. INVALID_ARGUMENT saying what is wrong.
StatusOr<uint64_t> SafetensorsHeaderLength(std::string_view first8, uint64_t file_size);

// Parses and checks the JSON header `text` against a data buffer of `buffer_size` bytes.
// INVALID_ARGUMENT naming the tensor and the problem; UNIMPLEMENTED for a valid dtype this
// reader does not support (F8_*, U16, U32, U64, C64, ...).
StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view text, uint64_t buffer_size);

}  // namespace trainyard::model
