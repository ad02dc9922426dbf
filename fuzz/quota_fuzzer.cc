// Project quotas (controller/project_quota.h) on arbitrary bytes: the body of
// POST /v1/admin/projects/P:setQuota and each project's entry of <data-dir>/quotas.json (an
// object of projects). A quota that reads must write JSON that reads back to the same quota.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "controller/project_quota.h"
#include "protojson/parse.h"

namespace {

void CheckRoundTrip(const nlohmann::json& value) {
  using trainyard::controller::ProjectQuotaFromJson;
  using trainyard::controller::ProjectQuotaToJson;
  auto quota = ProjectQuotaFromJson(value);
  if (!quota.ok()) return;
  const nlohmann::json written = ProjectQuotaToJson(*quota);
  auto again = ProjectQuotaFromJson(written);
  if (!again.ok() || ProjectQuotaToJson(*again) != written) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto json =
      trainyard::protojson::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!json.ok()) return 0;
  CheckRoundTrip(*json);  // a setQuota body
  if (json->is_object()) {
    for (const auto& [project, entry] : json->items()) CheckRoundTrip(entry);  // a quota file
  }
  return 0;
}
