#include "distributed/distributed_config.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/json_parse.h"

extern char** environ;

namespace trainyard::distributed {
namespace {

using Json = nlohmann::json;

const std::string* Find(const EnvMap& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return nullptr;
  return &it->second;
}

Status ParseInt(const std::string& text, const std::string& what, int min, int max, int* out) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgumentError(what + ": expected an integer, got \"" + text + "\"");
  }
  if (value < min || value > max) {
    return InvalidArgumentError(what + ": must be in [" + std::to_string(min) + ", " +
                                std::to_string(max) + "], got " + text);
  }
  *out = value;
  return Status::Ok();
}

StatusOr<DistributedConfig> FromTorchVariables(const EnvMap& env) {
  static const char* const kNames[] = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"};
  DistributedConfig config;
  config.source = "MASTER_ADDR";
  for (const char* name : kNames) {
    if (Find(env, name) == nullptr) {
      return InvalidArgumentError(
          std::string(name) +
          " is not set, but other torch.distributed variables (MASTER_ADDR, MASTER_PORT, "
          "WORLD_SIZE, RANK) are: set all four or none");
    }
  }
  config.master_addr = *Find(env, "MASTER_ADDR");
  TY_RETURN_IF_ERROR(
      ParseInt(*Find(env, "MASTER_PORT"), "MASTER_PORT", 1, 65535, &config.master_port));
  TY_RETURN_IF_ERROR(
      ParseInt(*Find(env, "WORLD_SIZE"), "WORLD_SIZE", 1, 1 << 20, &config.world_size));
  TY_RETURN_IF_ERROR(ParseInt(*Find(env, "RANK"), "RANK", 0, config.world_size - 1, &config.rank)
                         .WithPrefix("WORLD_SIZE=" + std::to_string(config.world_size)));
  if (const std::string* local = Find(env, "LOCAL_RANK")) {
    TY_RETURN_IF_ERROR(ParseInt(*local, "LOCAL_RANK", 0, 1 << 20, &config.local_rank));
  }
  if (config.world_size == 1) config.source = "single";
  return config;
}

// The pools of a Vertex/TF cluster in rank order, and this task's pool position and index.
struct ClusterView {
  std::vector<std::vector<std::string>> pools;  // addresses per pool, rank order
  int task_pool = -1;                           // -1: the task is not a cluster member
  int task_index = 0;
};

StatusOr<ClusterView> ParseCluster(const std::string& variable, const std::string& text,
                                   const std::vector<std::string>& pool_names) {
  StatusOr<Json> parsed = ParseJson(text);
  if (!parsed.ok()) {
    return InvalidArgumentError(variable + ": not valid JSON (" + parsed.status().message() + ")");
  }
  Json doc = std::move(*parsed);
  if (!doc.is_object() || !doc.contains("cluster") || !doc["cluster"].is_object()) {
    return InvalidArgumentError(variable + ": expected an object with a \"cluster\" object");
  }
  if (!doc.contains("task") || !doc["task"].is_object() || !doc["task"].contains("type") ||
      !doc["task"]["type"].is_string()) {
    return InvalidArgumentError(variable + ": task.type is missing or not a string");
  }
  ClusterView view;
  const std::string type = doc["task"]["type"].get<std::string>();
  const Json& index = doc["task"].contains("index") ? doc["task"]["index"] : Json(0);
  if (!index.is_number_integer() || index.get<int64_t>() < 0) {
    return InvalidArgumentError(variable + ": task.index must be a non-negative integer");
  }
  view.task_index = index.get<int>();
  bool known_type = type == "evaluator";
  for (size_t p = 0; p < pool_names.size(); ++p) {
    const Json& cluster = doc["cluster"];
    std::vector<std::string> addresses;
    if (cluster.contains(pool_names[p])) {
      const Json& list = cluster[pool_names[p]];
      if (!list.is_array()) {
        return InvalidArgumentError(variable + ": cluster." + pool_names[p] +
                                    " must be an array of \"host:port\" strings");
      }
      for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string()) {
          return InvalidArgumentError(variable + ": cluster." + pool_names[p] + "[" +
                                      std::to_string(i) + "] must be a \"host:port\" string");
        }
        addresses.push_back(list[i].get<std::string>());
      }
    }
    if (type == pool_names[p]) {
      known_type = true;
      view.task_pool = static_cast<int>(p);
      if (view.task_index >= static_cast<int>(addresses.size())) {
        return InvalidArgumentError(variable + ": task " + type + " index " +
                                    std::to_string(view.task_index) + " is outside cluster." +
                                    type + " (" + std::to_string(addresses.size()) + " replicas)");
      }
    }
    view.pools.push_back(std::move(addresses));
  }
  if (!known_type) {
    std::string names;
    for (const auto& n : pool_names) names += (names.empty() ? "" : ", ") + n;
    return InvalidArgumentError(variable + ": unknown task.type \"" + type + "\" (expected " +
                                names + " or evaluator)");
  }
  return view;
}

StatusOr<DistributedConfig> FromCluster(const std::string& variable, const ClusterView& view) {
  DistributedConfig config;
  if (view.task_pool < 0) {  // an evaluator: not part of the training collective
    config.source = "single";
    return config;
  }
  int world = 0;
  for (const auto& pool : view.pools) world += static_cast<int>(pool.size());
  int rank = 0;
  for (int p = 0; p < view.task_pool; ++p) rank += static_cast<int>(view.pools[p].size());
  rank += view.task_index;
  if (world <= 1) {
    config.source = "single";
    return config;
  }
  // The master is the first replica of the lowest non-empty pool (pool 0 in every valid job).
  const std::string* master = nullptr;
  std::string master_what;
  for (size_t p = 0; p < view.pools.size() && master == nullptr; ++p) {
    if (!view.pools[p].empty()) {
      master = &view.pools[p][0];
      master_what = variable + " cluster pool " + std::to_string(p) + "[0]";
    }
  }
  TY_RETURN_IF_ERROR(ParseHostPort(*master, master_what, &config.master_addr, &config.master_port));
  config.world_size = world;
  config.rank = rank;
  config.source = variable;
  return config;
}

}  // namespace

std::string DistributedConfig::Describe() const {
  if (!distributed()) return "single process";
  return "rank " + std::to_string(rank) + "/" + std::to_string(world_size) + " (master " +
         master_addr + ":" + std::to_string(master_port) + ", from " + source + ")";
}

Status ParseHostPort(const std::string& text, const std::string& what, std::string* host,
                     int* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return InvalidArgumentError(what + ": expected \"host:port\", got \"" + text + "\"");
  }
  std::string h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  TY_RETURN_IF_ERROR(ParseInt(text.substr(colon + 1), what + " port", 1, 65535, port));
  *host = h;
  return Status::Ok();
}

StatusOr<DistributedConfig> ConfigFromEnvironment(const EnvMap& env) {
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"}) {
    if (Find(env, name) == nullptr) continue;
    TY_ASSIGN_OR_RETURN(DistributedConfig config, FromTorchVariables(env));
    // The platform sets both; a user override of one side that the other contradicts would
    // make ranks disagree about the world, so it is refused here rather than hanging later.
    if (const std::string* spec = Find(env, "CLUSTER_SPEC")) {
      auto view = ParseCluster("CLUSTER_SPEC", *spec,
                               {"workerpool0", "workerpool1", "workerpool2", "workerpool3"});
      if (view.ok()) {
        auto from_spec = FromCluster("CLUSTER_SPEC", *view);
        if (from_spec.ok() && from_spec->world_size > 1 &&
            (from_spec->world_size != config.world_size || from_spec->rank != config.rank)) {
          return InvalidArgumentError(
              "WORLD_SIZE/RANK (" + std::to_string(config.world_size) + "/" +
              std::to_string(config.rank) + ") contradict CLUSTER_SPEC (world " +
              std::to_string(from_spec->world_size) + ", rank " + std::to_string(from_spec->rank) +
              "): unset the overridden variables");
        }
      }
    }
    return config;
  }
  if (const std::string* spec = Find(env, "CLUSTER_SPEC")) {
    TY_ASSIGN_OR_RETURN(ClusterView view,
                        ParseCluster("CLUSTER_SPEC", *spec,
                                     {"workerpool0", "workerpool1", "workerpool2", "workerpool3"}));
    return FromCluster("CLUSTER_SPEC", view);
  }
  if (const std::string* tf = Find(env, "TF_CONFIG")) {
    TY_ASSIGN_OR_RETURN(ClusterView view,
                        ParseCluster("TF_CONFIG", *tf, {"chief", "worker", "ps"}));
    return FromCluster("TF_CONFIG", view);
  }
  DistributedConfig single;
  single.source = "single";
  return single;
}

EnvMap CurrentEnvironment() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

StatusOr<DistributedConfig> FromEnvironment() {
  return ConfigFromEnvironment(CurrentEnvironment());
}

}  // namespace trainyard::distributed
