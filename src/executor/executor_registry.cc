#include "executor/executor_registry.h"

namespace trainyard::executor {

Status ExecutorRegistry::Register(const std::string& name, ExecutorFactory factory) {
  if (name.empty() || !factory) {
    return InvalidArgumentError("an executor needs a name and a factory");
  }
  if (!factories_.emplace(name, std::move(factory)).second) {
    return AlreadyExistsError("executor '" + name + "' is already registered");
  }
  return Status::Ok();
}

std::vector<std::string> ExecutorRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

StatusOr<CreatedExecutor> ExecutorRegistry::Create(const std::string& name,
                                                   const ExecutorConfig& config) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    std::string names;
    for (const auto& n : Names()) names += (names.empty() ? "" : ", ") + n;
    return InvalidArgumentError("--executor: '" + name +
                                "' is not a registered executor; use one of " +
                                (names.empty() ? std::string("(none built in)") : names));
  }
  return it->second(config);
}

}  // namespace trainyard::executor
