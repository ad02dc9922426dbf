#include "machines/machine_catalog.h"

#include <algorithm>

#include "common/nearest_name.h"
#include "machines/legacy_machines.h"

namespace trainyard::machines {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

MachineCatalog::MachineCatalog(std::vector<MachineType> machines,
                               std::vector<AcceleratorType> accelerators)
    : machines_(std::move(machines)), accelerators_(std::move(accelerators)) {}

const MachineType* MachineCatalog::FindMachine(std::string_view name) const {
  auto it = std::find_if(machines_.begin(), machines_.end(),
                         [&](const MachineType& m) { return m.name == name; });
  return it == machines_.end() ? nullptr : &*it;
}

const AcceleratorType* MachineCatalog::FindAccelerator(std::string_view name) const {
  auto it = std::find_if(accelerators_.begin(), accelerators_.end(),
                         [&](const AcceleratorType& a) { return a.name == name; });
  return it == accelerators_.end() ? nullptr : &*it;
}

std::vector<std::string> MachineCatalog::MachineNames() const {
  std::vector<std::string> out;
  for (const auto& m : machines_) out.push_back(m.name);
  return out;
}

std::vector<std::string> MachineCatalog::AcceleratorNames() const {
  std::vector<std::string> out;
  for (const auto& a : accelerators_) {
    if (!a.tpu) out.push_back(a.name);
  }
  return out;
}

std::vector<std::pair<std::string, int>> MachineCatalog::VertexAcceleratorEnum() const {
  std::vector<std::pair<std::string, int>> out = {{"ACCELERATOR_TYPE_UNSPECIFIED", 0}};
  for (const auto& a : accelerators_) out.emplace_back(a.name, a.vertex_enum);
  return out;
}

std::optional<double> MachineCatalog::HourlyUsd(const MachineType& machine,
                                                const std::string& accelerator_type,
                                                int accelerator_count) const {
  if (!machine.usd_per_hour) return std::nullopt;
  double usd = *machine.usd_per_hour;
  if (accelerator_count > 0) {
    const AcceleratorType* a = FindAccelerator(accelerator_type);
    if (a == nullptr || !a->usd_per_hour) return std::nullopt;
    usd += *a->usd_per_hour * accelerator_count;
  }
  return usd;
}

std::vector<MachineListing> MachineCatalog::List() const {
  std::vector<MachineListing> out;
  for (const auto& m : machines_) {
    out.push_back({m.name, m.vcpus, m.memory_gib, m.bundled_accelerator,
                   m.bundled_accelerator_count,
                   HourlyUsd(m, m.bundled_accelerator, m.bundled_accelerator_count)});
  }
  return out;
}

StatusOr<ResolvedMachine> MachineCatalog::Resolve(const MachineRequest& request,
                                                  std::string_view field) const {
  const std::string f(field);
  if (request.machine_type.empty()) {
    return InvalidArgumentError(f +
                                ".machineType: required; e.g. \"n1-standard-4\" (see "
                                "docs/api.md for the machine catalog)");
  }
  const MachineType* machine = FindMachine(request.machine_type);
  if (machine == nullptr) {
    std::string hint;
    if (const LegacyMachine* legacy = FindLegacyMachine(request.machine_type)) {
      hint = " ('" + legacy->name + "' is an AI Platform legacy name; Vertex names it " +
             legacy->machine.machine_type +
             (legacy->machine.accelerator_count > 0
                  ? " with " + std::to_string(legacy->machine.accelerator_count) + " x " +
                        legacy->machine.accelerator_type
                  : std::string()) +
             ")";
    }
    const std::string near = NearestName(request.machine_type, MachineNames());
    if (hint.empty() && !near.empty()) hint = " (did you mean " + near + "?)";
    return InvalidArgumentError(f + ".machineType: unknown machine type '" + request.machine_type +
                                "'" + hint + "; use one of " + Join(MachineNames()));
  }
  ResolvedMachine out;
  out.machine_type = machine->name;
  out.vcpus = machine->vcpus;
  out.memory_gib = machine->memory_gib;
  TY_RETURN_IF_ERROR(ResolveAccelerators(*machine, request, f, &out));
  out.hourly_usd = HourlyUsd(*machine, out.accelerator_type, out.accelerator_count);
  return out;
}

// The accelerator rules, in the order a user fixes them: the count, the type's name, then whether
// the machine type takes it.
Status MachineCatalog::ResolveAccelerators(const MachineType& machine,
                                           const MachineRequest& request, const std::string& f,
                                           ResolvedMachine* out) const {
  const std::string& type = request.accelerator_type;
  const int count = request.accelerator_count;
  if (count < 0) {
    return InvalidArgumentError(f + ".acceleratorCount: must be >= 0, got " +
                                std::to_string(count));
  }
  if (!type.empty() && count == 0) {
    return InvalidArgumentError(f + ".acceleratorCount: must be >= 1 when acceleratorType " + type +
                                " is set");
  }
  if (type.empty() && count > 0) {
    return InvalidArgumentError(f + ".acceleratorType: required when acceleratorCount is " +
                                std::to_string(count) + "; e.g. \"NVIDIA_TESLA_T4\"");
  }
  const AcceleratorType* accel = type.empty() ? nullptr : FindAccelerator(type);
  if (!type.empty() && accel == nullptr) {
    return InvalidArgumentError(f + ".acceleratorType: unknown accelerator '" + type +
                                "'; use one of " + Join(AcceleratorNames()));
  }
  if (accel != nullptr && accel->tpu) {
    return InvalidArgumentError(f + ".acceleratorType: " + type +
                                " is a Cloud TPU; TPUs are not supported by Trainyard, use a GPU "
                                "type such as NVIDIA_TESLA_T4");
  }
  if (machine.bundled_accelerator_count > 0) {
    if (!type.empty() &&
        (type != machine.bundled_accelerator || count != machine.bundled_accelerator_count)) {
      const std::string n = std::to_string(machine.bundled_accelerator_count);
      return InvalidArgumentError(f + ": " + machine.name + " comes with " + n + " x " +
                                  machine.bundled_accelerator + "; set acceleratorType " +
                                  machine.bundled_accelerator + " and acceleratorCount " + n +
                                  " (or leave both unset)");
    }
    out->accelerator_type = machine.bundled_accelerator;
    out->accelerator_count = machine.bundled_accelerator_count;
    out->accelerators_bundled = true;
    return Status::Ok();
  }
  out->accelerator_type = type;
  out->accelerator_count = count;
  return Status::Ok();
}

}  // namespace trainyard::machines
