// AIP-160 list filter and keyset page tokens on arbitrary bytes: a filter that parses is also
// evaluated and compiled to SQL; the input's second half is tried as a page token.
#include <cstddef>
#include <cstdint>
#include <string>

#include "spec/custom_job.h"
#include "store/list_filter.h"
#include "store/page_token.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  const size_t half = size / 2;
  auto filter = trainyard::store::ListFilter::Parse(text);
  if (filter.ok()) {
    trainyard::spec::CustomJob job;
    job.display_name = "job-a";
    job.labels["team"] = "nlp";
    (void)filter->Matches(job);
    std::string sql;
    std::vector<trainyard::store::ListFilter::SqlParam> params;
    filter->ToSql(&sql, &params);
  }
  (void)trainyard::store::DecodePageToken(text, "projects/p/locations/l", "");
  (void)trainyard::store::DecodePageToken(text.substr(half), "projects/p/locations/l",
                                          text.substr(0, half));
  return 0;
}
