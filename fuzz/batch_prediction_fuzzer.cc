// Batch prediction on arbitrary bytes: the create body (spec/batch_prediction_job.h) — a job that
// decodes must give its spec and decode again from the stored form — and an input file read as
// jsonl and as csv with an instanceConfig (batch_prediction/instance_reader.h), whose error lines
// must serialize (they are written to the errors file).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "batch_prediction/instance_reader.h"
#include "spec/batch_prediction_job.h"

namespace {

void ReadAs(std::string_view content, const char* format,
            const trainyard::spec::InstanceConfig& c) {
  int64_t index = 0;
  trainyard::batch_prediction::ReadSettings s{format, c, [](int64_t i) { return i % 3 != 1; }};
  (void)trainyard::batch_prediction::ForEachInstance(
      content, "gs://b/in", s, &index, [](trainyard::batch_prediction::Instance&& in) {
        nlohmann::json line = {{in.keyed ? "key" : "instance", in.echo}};
        if (!in.error.empty()) line["error"] = in.error;
        (void)line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (in.error.empty()) (void)in.input.dump();
        return trainyard::Status::Ok();
      });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto job = trainyard::spec::DecodeBatchPredictionJob(text); job.ok()) {
    if (!trainyard::spec::BatchPredictionSpecOf(*job).ok()) std::abort();
    if (!trainyard::spec::DecodeBatchPredictionJob(job->dump()).ok()) std::abort();
  }
  trainyard::spec::InstanceConfig keyed;
  keyed.key_field = "id";
  keyed.excluded_fields = {"x"};
  ReadAs(text, "jsonl", {});
  ReadAs(text, "jsonl", keyed);
  trainyard::spec::InstanceConfig arr;
  arr.instance_type = "array";
  arr.included_fields = {"b", "a"};
  ReadAs(text, "jsonl", arr);
  trainyard::spec::InstanceConfig csv_key;
  csv_key.key_field = "id";
  ReadAs(text, "csv", {});
  ReadAs(text, "csv", csv_key);
  return 0;
}
