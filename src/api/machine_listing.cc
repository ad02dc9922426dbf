#include "api/machine_listing.h"

#include "executor/machine_catalog.h"

namespace trainyard::api {

using nlohmann::json;

nlohmann::json MachineCatalogListing() {
  const executor::MachineCatalog& catalog = executor::MachineCatalog::Default();
  json machines = json::array();
  for (const std::string& name : catalog.MachineNames()) {
    const executor::MachineType* m = catalog.FindMachine(name);
    json entry = {{"name", m->name},
                  {"family", m->name.substr(0, m->name.rfind('-'))},
                  {"vcpus", m->vcpus},
                  {"memoryGib", m->memory_gib},
                  {"usdPerHour", m->usd_per_hour}};
    // With no accelerator named, HourlyUsd prices the bundled GPUs (machine_catalog.h).
    StatusOr<double> with = catalog.HourlyUsd(m->name, "", 0);
    entry["usdPerHourWithAccelerators"] = with.ok() ? *with : m->usd_per_hour;
    if (m->bundled_accelerator_count > 0) {
      entry["bundledAccelerator"] = {{"acceleratorType", m->bundled_accelerator},
                                     {"acceleratorCount", m->bundled_accelerator_count}};
    }
    machines.push_back(std::move(entry));
  }
  json accelerators = json::array();
  for (const std::string& name : catalog.AcceleratorNames()) {
    const executor::AcceleratorType* a = catalog.FindAccelerator(name);
    accelerators.push_back(
        {{"name", a->name}, {"memoryGib", a->memory_gib}, {"usdPerHour", a->usd_per_hour}});
  }
  return {{"machineTypes", std::move(machines)},
          {"acceleratorTypes", std::move(accelerators)},
          {"currency", "USD"},
          {"priceNote",
           "estimated on-demand Vertex AI custom-training prices (us-central1) per replica-hour; "
           "accelerators are billed per GPU on top of the machine"}};
}

}  // namespace trainyard::api
