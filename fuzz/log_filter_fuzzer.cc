// Cloud Logging entries:list filters (what gcloud stream-logs / logging read send) on arbitrary
// bytes: parse, and when it parses, match one entry.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cloud_logging/log_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto filter = trainyard::cloud_logging::LogFilter::Parse(text);
  if (!filter.ok()) return 0;
  trainyard::cloud_logging::EntryView entry;
  entry.project = "p";
  entry.job_id = filter->job_id();
  entry.task_name = "workerpool0-0";
  entry.log_name = "projects/p/logs/workerpool0-0";
  entry.severity = "INFO";
  entry.text = "Epoch 1/2 loss=0.5";
  entry.insert_id = entry.job_id + "-0000000000000001";
  (void)filter->Matches(entry);
  return 0;
}
