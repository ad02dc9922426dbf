// CustomJob codec (proto3 JSON) on arbitrary bytes: parse in both modes, and a job that parses
// must encode, reparse and validate without crashing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spec/custom_job_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using trainyard::spec::DecodeMode;
  for (DecodeMode mode : {DecodeMode::kRequest, DecodeMode::kStored}) {
    auto job = trainyard::spec::ParseCustomJob(text, mode);
    if (!job.ok()) continue;
    std::string again = trainyard::spec::CustomJobToJson(*job).dump();
    (void)trainyard::spec::ParseCustomJob(again, DecodeMode::kStored);
  }
  return 0;
}
