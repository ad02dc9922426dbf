// The machine catalog as clients list it (GET /v1/machineTypes, docs/api.md): every machine type
// with its vCPUs, memory, bundled accelerators and hourly price, and every accelerator type with
// its price, for the console's worker-pool form.
//
// This is the one place the API reads the machine catalog (src/machines/machine_catalog.h) for a
// listing.
#pragma once

#include <nlohmann/json.hpp>

namespace trainyard::api {

// {"machineTypes": [{"name", "family", "vcpus", "memoryGib", "usdPerHour" (the machine alone),
//                    "bundledAccelerator": {"acceleratorType", "acceleratorCount"} (a2/a3/g2
//                    types only), "usdPerHourWithAccelerators" (machine + bundled GPUs)}, ...],
//  "acceleratorTypes": [{"name", "memoryGib", "usdPerHour" (per accelerator)}, ...],
//  "currency": "USD", "priceNote": "..."}
// Catalog order (families grouped, smallest first). Never fails.
nlohmann::json MachineCatalogListing();

}  // namespace trainyard::api
