// TrainingPipeline and UploadModelRequest codecs (spec/training_pipeline.h, spec/model.h) on
// arbitrary bytes: a pipeline that decodes must give its CustomJobSpec again from the stored form,
// and a decoded upload's model must decode again as a Model.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spec/model.h"
#include "spec/training_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto pipeline = trainyard::spec::DecodeTrainingPipeline(text); pipeline.ok()) {
    (void)trainyard::spec::TrainingTaskSpec(*pipeline);
    (void)trainyard::spec::DecodeTrainingPipeline(pipeline->dump());
  }
  if (auto upload = trainyard::spec::ParseUploadModelRequest(text); upload.ok()) {
    (void)trainyard::spec::DecodeModel(upload->model, "model");
  }
  return 0;
}
