#include "command_registry.h"

#include <algorithm>

namespace trainyard::tools {
namespace {
std::vector<CommandDef>& Registry() {
  static std::vector<CommandDef> registry;
  return registry;
}
}  // namespace

bool RegisterCommand(CommandDef def) {
  auto& r = Registry();
  r.push_back(std::move(def));
  std::stable_sort(r.begin(), r.end(),
                   [](const CommandDef& a, const CommandDef& b) { return a.order < b.order; });
  return true;
}

const std::vector<CommandDef>& RegisteredCommands() { return Registry(); }

}  // namespace trainyard::tools
