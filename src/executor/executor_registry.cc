#include "executor/executor_registry.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace trainyard::executor {

Status ExecutorRegistry::Register(const std::string& name, ExecutorBackend backend) {
  if (name.empty() || !backend.create) {
    return InvalidArgumentError("an executor needs a name and a factory");
  }
  if (backends_.count(name) != 0) {
    return AlreadyExistsError("executor '" + name + "' is already registered");
  }
  std::vector<ExecutorFlag> taken = Flags();
  for (const ExecutorFlag& flag : backend.flags) {
    if (!flag.name.starts_with("--") || !flag.set) {
      return InvalidArgumentError("executor '" + name + "': flag '" + flag.name +
                                  "' needs a --name and a setter");
    }
    for (const ExecutorFlag& other : taken) {
      if (other.name == flag.name) {
        return AlreadyExistsError("executor '" + name + "': flag " + flag.name +
                                  " is already registered");
      }
    }
    taken.push_back(flag);
  }
  backends_.emplace(name, std::move(backend));
  return Status::Ok();
}

Status ExecutorRegistry::Register(const std::string& name, ExecutorFactory factory) {
  return Register(name, ExecutorBackend{{}, std::move(factory)});
}

std::vector<ExecutorFlag> ExecutorRegistry::Flags() const {
  std::vector<ExecutorFlag> flags;
  for (const auto& [name, backend] : backends_) {
    flags.insert(flags.end(), backend.flags.begin(), backend.flags.end());
  }
  return flags;
}

Status ExecutorRegistry::SetFlag(const std::string& flag, const std::string& value) {
  for (const auto& [name, backend] : backends_) {
    for (const ExecutorFlag& f : backend.flags) {
      if (f.name == flag) return f.set(value);
    }
  }
  return NotFoundError("no executor has a flag " + flag);
}

std::vector<std::string> ExecutorRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, backend] : backends_) names.push_back(name);
  return names;
}

StatusOr<CreatedExecutor> ExecutorRegistry::Create(const std::string& name,
                                                   const ExecutorConfig& config) const {
  auto it = backends_.find(name);
  if (it == backends_.end()) {
    std::string names;
    for (const auto& n : Names()) names += (names.empty() ? "" : ", ") + n;
    return InvalidArgumentError("--executor: '" + name +
                                "' is not a registered executor; use one of " +
                                (names.empty() ? std::string("(none built in)") : names));
  }
  return it->second.create(config);
}

StatusOr<int> ParseIntFlag(const std::string& flag, const std::string& value, int min, int max) {
  int parsed = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
  if (value.empty() || ec != std::errc() || ptr != end || parsed < min || parsed > max) {
    return InvalidArgumentError(flag + ": '" + value + "' is not an integer between " +
                                std::to_string(min) + " and " + std::to_string(max));
  }
  return parsed;
}

StatusOr<double> ParseNumberFlag(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const double parsed = value.empty() ? 0 : std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(parsed)) {
    return InvalidArgumentError(flag + ": '" + value + "' is not a number");
  }
  return parsed;
}

}  // namespace trainyard::executor
