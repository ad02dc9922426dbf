#include "api/machine_listing.h"

#include "machines/machine_catalog.h"

namespace trainyard::api {

using nlohmann::json;

namespace {

// A price the catalog has no source for is JSON null (the console shows "—").
json Usd(const std::optional<double>& usd) { return usd ? json(*usd) : json(nullptr); }

}  // namespace

nlohmann::json MachineCatalogListing() {
  const machines::MachineCatalog& catalog = machines::MachineCatalog::Default();
  json listed = json::array();
  for (const machines::MachineListing& row : catalog.List()) {
    const machines::MachineType* m = catalog.FindMachine(row.name);
    json entry = {{"name", row.name},
                  {"family", row.name.substr(0, row.name.rfind('-'))},
                  {"vcpus", row.vcpus},
                  {"memoryGib", row.memory_gib},
                  {"usdPerHour", Usd(m->usd_per_hour)},
                  {"usdPerHourWithAccelerators", Usd(row.hourly_usd)}};
    if (row.bundled_accelerator_count > 0) {
      entry["bundledAccelerator"] = {{"acceleratorType", row.bundled_accelerator},
                                     {"acceleratorCount", row.bundled_accelerator_count}};
    }
    listed.push_back(std::move(entry));
  }
  json accelerators = json::array();
  for (const std::string& name : catalog.AcceleratorNames()) {
    const machines::AcceleratorType* a = catalog.FindAccelerator(name);
    accelerators.push_back(
        {{"name", a->name}, {"memoryGib", a->memory_gib}, {"usdPerHour", Usd(a->usd_per_hour)}});
  }
  return {{"machineTypes", std::move(listed)},
          {"acceleratorTypes", std::move(accelerators)},
          {"currency", "USD"},
          {"priceNote",
           "estimated on-demand Vertex AI custom-training prices (us-central1) per replica-hour; "
           "accelerators are billed per GPU on top of the machine"}};
}

}  // namespace trainyard::api
