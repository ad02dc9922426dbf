// Reader and writer for the safetensors format (huggingface/safetensors):
//   8 bytes   N, little-endian u64: size of the header
//   N bytes   UTF-8 JSON: {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...,
//             "__metadata__": {"key": "value"}}   (optional, strings only)
//   rest      the byte buffer; offsets are relative to it, END exclusive; little-endian row-major.
//
// The reader checks everything the reference implementation checks, so a truncated or hostile
// file gives INVALID_ARGUMENT / DATA_LOSS naming the tensor and the problem, never a crash or an
// over-allocation: N <= 100,000,000; the header is a JSON object without duplicate names; each
// dtype is known; (END - BEGIN) == numel * element size; the offsets, in order, tile the buffer
// from 0 without gaps or overlaps; 8 + N + buffer == file size.
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <string>

#include "common/status.h"
#include "model/safetensors_header.h"

namespace trainyard::model {

struct SafetensorsFile {
  std::map<std::string, torch::Tensor> tensors;  // CPU, contiguous
  std::map<std::string, std::string> metadata;   // "__metadata__"
};

// Reads every tensor. Supported dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL; a file using
// another valid dtype (F8_*, U16, U32, U64, C64, ...) is UNIMPLEMENTED naming the tensor.
// NOT_FOUND if the file does not exist; INVALID_ARGUMENT "<path>: <problem>" if it is malformed.
StatusOr<SafetensorsFile> ReadSafetensorsFile(const std::filesystem::path& path);

// ReadSafetensorsFile without the metadata.
StatusOr<std::map<std::string, torch::Tensor>> ReadSafetensors(const std::filesystem::path& path);

// Parses an in-memory safetensors image (same checks as the file reader).
StatusOr<SafetensorsFile> ParseSafetensors(std::string_view bytes);

// Writes `tensors` (any device/layout; copied to contiguous CPU) in name order with the header
// padded with spaces to a multiple of 8, as the reference writer does. Atomic: written to a temp
// file beside `path`, fsynced, renamed over `path`, directory fsynced; on failure `path` is
// untouched. INVALID_ARGUMENT for an unsupported dtype, an empty name or the name "__metadata__".
Status WriteSafetensors(const std::filesystem::path& path,
                        const std::map<std::string, torch::Tensor>& tensors,
                        const std::map<std::string, std::string>& metadata = {});

// The bytes WriteSafetensors would write.
StatusOr<std::string> SerializeSafetensors(const std::map<std::string, torch::Tensor>& tensors,
                                           const std::map<std::string, std::string>& metadata = {});

}  // namespace trainyard::model
