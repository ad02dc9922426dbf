// Vertex predict request bodies (serving::ParseTextInstances, what `trainyard-bert serve` and the
// endpoints' native runtime read from any client) on arbitrary bytes: parsed texts must encode
// back into a request that parses to the same texts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "serving/prediction_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using trainyard::serving::ParseTextInstances;
  auto texts = ParseTextInstances(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!texts.ok()) return 0;
  nlohmann::json request = {{"instances", *texts}};
  auto again = ParseTextInstances(request.dump());
  if (!again.ok() || *again != *texts) std::abort();
  return 0;
}
