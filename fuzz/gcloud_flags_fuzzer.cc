// gcloud flag values (ArgList/ArgDict escaping, --worker-pool-spec, --labels, --args) on
// arbitrary bytes, split into flag values at NUL bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gcloud_flags.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      parts.emplace_back();
    } else {
      parts.back() += static_cast<char>(data[i]);
    }
  }
  using namespace trainyard::cli;
  (void)ParseArgList(parts[0]);
  (void)ParseArgDict("--labels", parts[0]);
  (void)ParseWorkerPoolSpec(parts[0], ParseArgList(parts.size() > 1 ? parts[1] : ""));
  CreateFlags flags;
  flags.display_name = "fuzz";
  flags.worker_pool_specs = {parts[0]};
  if (parts.size() > 1) flags.args = parts[1];
  if (parts.size() > 2) flags.command = parts[2];
  if (parts.size() > 3) flags.labels = parts[3];
  (void)BuildCreateRequest(flags);
  return 0;
}
