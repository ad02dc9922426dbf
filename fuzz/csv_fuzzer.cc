// RFC 4180 CSV reader (libcsv) on arbitrary bytes; a table that parses must format again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "data/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto table = trainyard::data::ParseCsv(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.csv");
  if (table.ok()) (void)trainyard::data::FormatCsv(*table);
  return 0;
}
