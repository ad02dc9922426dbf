// labels.json (data::LabelMap, read from next to untrusted training data) on arbitrary bytes: a
// map that reads must write one shape that reads back to the same names in the same order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "data/label_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using trainyard::data::LabelMap;
  auto map = LabelMap::FromJson(std::string_view(reinterpret_cast<const char*>(data), size),
                                "fuzz/labels.json");
  if (!map.ok()) return 0;
  auto again = LabelMap::FromJson(map->ToJson({{"seed", 42}}), "fuzz/labels.json (written)");
  if (!again.ok() || again->names() != map->names()) std::abort();
  return 0;
}
