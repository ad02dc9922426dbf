// The checkpoint readers' hostile-input surface on arbitrary bytes: a safetensors file's header
// (length, JSON, dtypes, shapes, offsets; model/safetensors_header.h, which every read goes
// through before any tensor is made) and HF config.json. The first byte picks the reader.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/bert_config.h"
#include "model/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    (void)trainyard::model::BertConfig::FromJson(bytes);
    return 0;
  }
  auto n = trainyard::model::SafetensorsHeaderLength(bytes.substr(0, 8), bytes.size());
  if (!n.ok()) return 0;
  auto header =
      trainyard::model::ParseSafetensorsHeader(bytes.substr(8, *n), bytes.size() - 8 - *n);
  if (!header.ok()) return 0;
  // What the reader would then copy: every entry inside the buffer, in order, tiling it.
  uint64_t expected = 0;
  for (const auto& e : header->entries) {
    if (e.begin != expected || e.end < e.begin || e.dtype == nullptr) __builtin_trap();
    expected = e.end;
  }
  if (expected != bytes.size() - 8 - *n) __builtin_trap();
  return 0;
}
