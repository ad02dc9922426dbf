#include "spec/legacy_machines.h"

#include "machines/legacy_machines.h"

namespace trainyard::spec {
namespace {

// The legacy name whose machine is `m` (the tables of machines/legacy_machines.h are one-to-one).
std::string LegacyNameOf(const machines::MachineRequest& m) {
  for (const machines::LegacyMachine& l : machines::LegacyMachines()) {
    if (l.machine.machine_type == m.machine_type &&
        l.machine.accelerator_type == m.accelerator_type &&
        l.machine.accelerator_count == m.accelerator_count) {
      return l.name;
    }
  }
  return m.machine_type;
}

}  // namespace

std::optional<LegacyMachine> LegacyMachineType(std::string_view name) {
  const machines::LegacyMachine* l = machines::FindLegacyMachine(name);
  if (l == nullptr) return std::nullopt;
  return LegacyMachine{l->machine.machine_type, l->machine.accelerator_type,
                       l->machine.accelerator_count};
}

std::vector<std::string> LegacyMachineNames() {
  std::vector<std::string> names;
  for (const machines::LegacyMachine& l : machines::LegacyMachines()) names.push_back(l.name);
  return names;
}

std::optional<ScaleTierPreset> ScaleTierPresetOf(ScaleTier tier) {
  if (tier == ScaleTier::kBasicTpu || tier == ScaleTier::kCustom) return std::nullopt;
  StatusOr<std::vector<machines::ScaleTierPool>> pools =
      machines::ScaleTierPools(ScaleTierName(tier), "scaleTier");
  if (!pools.ok()) return std::nullopt;
  ScaleTierPreset preset;
  for (const machines::ScaleTierPool& p : *pools) {
    const std::string name = LegacyNameOf(p.machine);
    if (p.role == "master") {
      preset.master = name;
    } else if (p.role == "worker") {
      preset.worker = name;
      preset.worker_count = p.replica_count;
    } else {
      preset.parameter_server = name;
      preset.parameter_server_count = p.replica_count;
    }
  }
  return preset;
}

}  // namespace trainyard::spec
