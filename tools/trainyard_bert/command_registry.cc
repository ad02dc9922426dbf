#include "command_registry.h"

#include <algorithm>
#include <iostream>

#include "common/bucket_path.h"
#include "common/exit_code.h"

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

int ReportFailure(std::string_view prefix, const Status& s) {
  std::cerr << prefix << WithGcsUris(s.message()) << "\n";
  return TrainerExitCodeFor(s);
}

}  // namespace trainyard::tools
