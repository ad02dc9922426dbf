// HyperparameterTuningJob/StudySpec codec and validation on arbitrary JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/json_parse.h"
#include "tuning/study_spec_json.h"
#include "tuning/study_spec_validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = trainyard::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!j.ok()) return 0;
  auto job = trainyard::tuning::ParseHyperparameterTuningJobSpec(*j);
  if (job.ok()) {
    (void)trainyard::tuning::ValidateHyperparameterTuningJobSpec(*job);
    (void)trainyard::tuning::ToJson(*job).dump();
  }
  auto study = trainyard::tuning::ParseStudySpec(*j);
  if (study.ok()) (void)trainyard::tuning::ValidateStudySpec(*study);
  return 0;
}
