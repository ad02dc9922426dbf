// ParseJson (the one parser for untrusted JSON) and gs:// name validation on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/bucket_path.h"
#include "common/json_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto j = trainyard::ParseJson(text, {.max_depth = 100, .reject_duplicate_keys = true});
  if (j.ok()) (void)j->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)trainyard::ParseGcsUri(text);
  return 0;
}
