// AI Platform Training's Job request decoder (spec/legacy_job_json.h) and the TrainingInput
// translation (spec/legacy_translation.h) on arbitrary bytes: a request that decodes must
// encode to a trainingInput that decodes back to the same encoding (the round trip the API
// relies on to echo trainingInput), and translate without crashing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "spec/legacy_job_json.h"
#include "spec/legacy_translation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto job = trainyard::spec::ParseLegacyJobRequest(text);
  if (!job.ok()) return 0;
  const nlohmann::json encoded = trainyard::spec::TrainingInputToJson(job->training_input);
  auto again = trainyard::spec::TrainingInputFromJson(encoded, "trainingInput");
  if (!again.ok() || trainyard::spec::TrainingInputToJson(*again) != encoded) std::abort();
  (void)trainyard::spec::TranslateTrainingInput(job->training_input);
  (void)trainyard::spec::LegacyJobToJson(*job).dump();
  return 0;
}
