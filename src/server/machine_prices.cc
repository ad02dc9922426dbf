#include "server/machine_prices.h"

namespace trainyard::server {
namespace {

StatusOr<machines::ResolvedMachine> Resolve(const machines::MachineCatalog& catalog,
                                            const spec::MachineSpec& m) {
  return catalog.Resolve(
      {m.machine_type, m.accelerator_type, static_cast<int>(m.accelerator_count)}, "machineSpec");
}

}  // namespace

controller::PriceFn CatalogPrices(const machines::MachineCatalog& catalog) {
  return [&catalog](const spec::MachineSpec& m) -> std::optional<double> {
    auto machine = Resolve(catalog, m);
    if (!machine.ok()) return std::nullopt;
    return machine->hourly_usd;  // nullopt too where the catalog knows no price
  };
}

observability::ResourcesFn CatalogResources(const machines::MachineCatalog& catalog) {
  return [&catalog](const spec::MachineSpec& m) {
    observability::ReplicaResources r;
    if (auto machine = Resolve(catalog, m); machine.ok()) {
      r.cpus = machine->vcpus;
      r.memory_gib = machine->memory_gib;
      r.gpus = machine->accelerator_count;
      r.gpu_type = machine->accelerator_type;
    }
    return r;
  };
}

}  // namespace trainyard::server
