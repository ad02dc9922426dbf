// safetensors files and HF config.json (the checkpoint readers' hostile-input surface) on
// arbitrary bytes: the first byte picks the reader.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/bert_config.h"
#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    (void)trainyard::model::BertConfig::FromJson(bytes);
  } else {
    (void)trainyard::model::ParseSafetensors(bytes);
  }
  return 0;
}
