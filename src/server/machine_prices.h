// What the server's controllers and metrics learn about a job's machines, all from one
// machines::MachineCatalog (machine type + requested or bundled accelerators).
#pragma once

#include "controller/job_controller.h"
#include "machines/machine_catalog.h"
#include "observability/server_metrics.h"

namespace trainyard::server {

// The hourly USD of one replica of a MachineSpec (MachineCatalog::Resolve's hourly_usd); nullopt
// for a spec the catalog refuses or cannot price. `catalog` must outlive the function.
controller::PriceFn CatalogPrices(const machines::MachineCatalog& catalog);

// The CPUs and GPUs one replica of a MachineSpec occupies; zeros for a spec the catalog refuses.
// `catalog` must outlive the function.
observability::ResourcesFn CatalogResources(const machines::MachineCatalog& catalog);

}  // namespace trainyard::server
