#include "replica_contract/replica_contract.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/json_parse.h"

extern char** environ;

namespace trainyard::replica_contract {
namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// ---- encoding --------------------------------------------------------------------------------

bool Before(const Member& a, const Member& b) {
  return std::tie(a.pool_index, a.replica_index) < std::tie(b.pool_index, b.replica_index);
}

// Pools in order, each with its replicas' addresses in index order.
std::map<int, std::vector<std::string>> AddressesByPool(const ClusterLayout& layout) {
  std::vector<Member> sorted = layout.members;
  std::sort(sorted.begin(), sorted.end(), Before);
  std::map<int, std::vector<std::string>> out;
  for (const auto& m : sorted) out[m.pool_index].push_back(m.address);
  return out;
}

std::string Document(const ClusterLayout& layout, OJson cluster, const std::string& task_type) {
  const Member& self = layout.members.at(layout.self);
  OJson doc;
  doc["cluster"] = std::move(cluster);
  doc["environment"] = "cloud";
  doc["task"] =
      OJson{{"type", task_type}, {"index", self.replica_index}, {"trial", layout.trial_id}};
  if (!layout.job_spec_json.empty() && layout.job_spec_json.size() <= kMaxJobFieldBytes) {
    doc["job"] = layout.job_spec_json;
  }
  return doc.dump();
}

std::string WithSlash(std::string s) {
  if (!s.empty() && s.back() != '/') s += '/';
  return s;
}

// ---- decoding --------------------------------------------------------------------------------

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

StatusOr<ReplicaRole> FromTorchVariables(const EnvMap& env) {
  ReplicaRole role;
  role.source = kMasterAddr;
  for (const char* name : {kMasterAddr, kMasterPort, kWorldSize, kRank}) {
    if (Find(env, name) == nullptr) {
      return InvalidArgumentError(
          std::string(name) +
          " is not set, but other torch.distributed variables (MASTER_ADDR, MASTER_PORT, "
          "WORLD_SIZE, RANK) are: set all four or none");
    }
  }
  role.master_addr = *Find(env, kMasterAddr);
  TY_RETURN_IF_ERROR(ParseInt(*Find(env, kMasterPort), kMasterPort, 1, 65535, &role.master_port));
  TY_RETURN_IF_ERROR(ParseInt(*Find(env, kWorldSize), kWorldSize, 1, 1 << 20, &role.world_size));
  TY_RETURN_IF_ERROR(ParseInt(*Find(env, kRank), kRank, 0, role.world_size - 1, &role.rank)
                         .WithPrefix("WORLD_SIZE=" + std::to_string(role.world_size)));
  if (const std::string* local = Find(env, kLocalRank)) {
    TY_RETURN_IF_ERROR(ParseInt(*local, kLocalRank, 0, 1 << 20, &role.local_rank));
  }
  if (role.world_size == 1) role.source = "single";
  return role;
}

StatusOr<std::vector<std::string>> AddressList(const std::string& variable, const Json& cluster,
                                               const std::string& key) {
  std::vector<std::string> addresses;
  if (!cluster.contains(key)) return addresses;
  const Json& list = cluster[key];
  if (!list.is_array()) {
    return InvalidArgumentError(variable + ": cluster." + key +
                                " must be an array of \"host:port\" strings");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return InvalidArgumentError(variable + ": cluster." + key + "[" + std::to_string(i) +
                                  "] must be a \"host:port\" string");
    }
    addresses.push_back(list[i].get<std::string>());
  }
  return addresses;
}

// `pool_keys[p]`: the cluster keys read as pool position p (the first present one wins).
StatusOr<ClusterDocument> DecodeDocument(const std::string& variable, const std::string& text,
                                         const std::vector<std::vector<std::string>>& pool_keys,
                                         bool evaluator_outside) {
  StatusOr<Json> parsed = ParseJson(text);
  if (!parsed.ok()) {
    return InvalidArgumentError(variable + ": not valid JSON (" + parsed.status().message() + ")");
  }
  Json doc = std::move(*parsed);
  if (!doc.is_object() || !doc.contains("cluster") || !doc["cluster"].is_object()) {
    return InvalidArgumentError(variable + ": expected an object with a \"cluster\" object");
  }
  const Json& task = doc.contains("task") ? doc["task"] : Json();
  if (!task.is_object() || !task.contains("type") || !task["type"].is_string()) {
    return InvalidArgumentError(variable + ": task.type is missing or not a string");
  }
  ClusterDocument out;
  out.task_type = task["type"].get<std::string>();
  const Json index = task.contains("index") ? task["index"] : Json(0);
  if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() > 1 << 20) {
    return InvalidArgumentError(variable + ": task.index must be a non-negative integer");
  }
  out.task_index = index.get<int>();
  if (task.contains("trial") && task["trial"].is_string()) out.trial = task["trial"];
  if (doc.contains("job") && doc["job"].is_string()) out.job = doc["job"];
  bool known_type = evaluator_outside && out.task_type == "evaluator";
  for (size_t p = 0; p < pool_keys.size(); ++p) {
    std::vector<std::string> addresses;
    for (const std::string& key : pool_keys[p]) {
      if (!doc["cluster"].contains(key)) continue;
      TY_ASSIGN_OR_RETURN(addresses, AddressList(variable, doc["cluster"], key));
      break;
    }
    if (std::find(pool_keys[p].begin(), pool_keys[p].end(), out.task_type) != pool_keys[p].end()) {
      known_type = true;
      out.task_pool = static_cast<int>(p);
      if (out.task_index >= static_cast<int>(addresses.size())) {
        return InvalidArgumentError(variable + ": task " + out.task_type + " index " +
                                    std::to_string(out.task_index) + " is outside cluster." +
                                    out.task_type + " (" + std::to_string(addresses.size()) +
                                    " replicas)");
      }
    }
    out.pools.push_back(std::move(addresses));
  }
  if (!known_type) {
    std::string names;
    for (const auto& keys : pool_keys) names += (names.empty() ? "" : ", ") + keys[0];
    return InvalidArgumentError(variable + ": unknown task.type \"" + out.task_type +
                                "\" (expected " + names +
                                (evaluator_outside ? " or evaluator)" : ")"));
  }
  return out;
}

StatusOr<ReplicaRole> RoleFromDocument(const std::string& variable, const ClusterDocument& doc) {
  ReplicaRole role;
  role.source = "single";
  if (doc.task_pool < 0) return role;  // an evaluator: not part of the training collective
  int world = 0;
  for (const auto& pool : doc.pools) world += static_cast<int>(pool.size());
  if (world <= 1) return role;
  int rank = doc.task_index;
  for (int p = 0; p < doc.task_pool; ++p) rank += static_cast<int>(doc.pools[p].size());
  for (size_t p = 0; p < doc.pools.size(); ++p) {
    if (doc.pools[p].empty()) continue;
    TY_RETURN_IF_ERROR(ParseHostPort(doc.pools[p][0],
                                     variable + " cluster pool " + std::to_string(p) + "[0]",
                                     &role.master_addr, &role.master_port));
    break;
  }
  role.world_size = world;
  role.rank = rank;
  role.source = variable;
  return role;
}

// The platform sets both; a user override of one side that the other contradicts would make
// ranks disagree about the world, so it is refused here rather than hanging later.
Status CheckAgainstClusterSpec(const EnvMap& env, const ReplicaRole& role) {
  const std::string* spec = Find(env, kClusterSpec);
  if (spec == nullptr) return Status::Ok();
  auto doc = DecodeClusterSpec(*spec);
  if (!doc.ok()) return Status::Ok();
  auto from_spec = RoleFromDocument(kClusterSpec, *doc);
  if (!from_spec.ok() || from_spec->world_size <= 1) return Status::Ok();
  if (from_spec->world_size == role.world_size && from_spec->rank == role.rank) {
    return Status::Ok();
  }
  return InvalidArgumentError(
      "WORLD_SIZE/RANK (" + std::to_string(role.world_size) + "/" + std::to_string(role.rank) +
      ") contradict CLUSTER_SPEC (world " + std::to_string(from_spec->world_size) + ", rank " +
      std::to_string(from_spec->rank) + "): unset the overridden variables");
}

}  // namespace

std::string PermanentExitMeaning(int exit_code) {
  switch (exit_code) {
    case kExitUsageError:
      return "a usage error";
    case kExitDataError:
      return "bad input data";
    case kExitNoInput:
      return "an input is missing";
    case kExitNoPermission:
      return "permission denied";
    case kExitConfig:
      return "a configuration error";
    case 126:
      return "the command cannot be executed";
    case 127:
      return "the command was not found";
    default:
      return "";
  }
}

bool IsPermanentExit(int exit_code) { return !PermanentExitMeaning(exit_code).empty(); }

bool IsPlatformOwned(const std::string& name) {
  for (const char* e : {kClusterSpec, kTfConfig, kMasterAddr, kMasterPort, kWorldSize, kRank,
                        kLocalRank, kCudaVisibleDevices, kTrainyardReplicaPort}) {
    if (name == e) return true;
  }
  return name.starts_with("AIP_") || name.starts_with("CLOUD_ML_");
}

std::string ClusterSpecPoolName(int pool_index) {
  return "workerpool" + std::to_string(pool_index);
}

std::string TfConfigRole(int pool_index) {
  switch (pool_index) {
    case 0:
      return "chief";
    case 1:
      return "worker";
    case 2:
      return "ps";
    default:
      return "evaluator";
  }
}

std::string TaskName(int pool_index, int replica_index) {
  return ClusterSpecPoolName(pool_index) + "-" + std::to_string(replica_index);
}

std::string ReplicaDescription(int pool_index, int replica_index) {
  return ClusterSpecPoolName(pool_index) + " replica " + std::to_string(replica_index);
}

std::string EncodeClusterSpec(const ClusterLayout& layout) {
  OJson cluster = OJson::object();
  for (const auto& [pool, addresses] : AddressesByPool(layout)) {
    cluster[ClusterSpecPoolName(pool)] = addresses;
  }
  return Document(layout, std::move(cluster),
                  ClusterSpecPoolName(layout.members.at(layout.self).pool_index));
}

std::string EncodeTfConfig(const ClusterLayout& layout) {
  auto role = [&layout](int pool) {
    return pool == 0 && layout.tf_config_primary_role == "master" ? std::string("master")
                                                                  : TfConfigRole(pool);
  };
  OJson cluster = OJson::object();
  for (const auto& [pool, addresses] : AddressesByPool(layout)) {
    if (pool <= 2) cluster[role(pool)] = addresses;  // evaluators are not in the cluster
  }
  return Document(layout, std::move(cluster), role(layout.members.at(layout.self).pool_index));
}

int GlobalRank(const ClusterLayout& layout, size_t i) {
  const Member& self = layout.members.at(i);
  return static_cast<int>(std::count_if(layout.members.begin(), layout.members.end(),
                                        [&](const Member& m) { return Before(m, self); }));
}

EnvMap EncodeRoleVariables(const ClusterLayout& layout) {
  EnvMap env;
  const Member* master = nullptr;
  for (const auto& m : layout.members) {
    if (master == nullptr || Before(m, *master)) master = &m;
  }
  if (master != nullptr) {
    const std::string& addr = master->address;
    size_t colon = addr.rfind(':');
    env[kMasterAddr] = addr.substr(0, colon);
    env[kMasterPort] = colon == std::string::npos ? "" : addr.substr(colon + 1);
  }
  env[kWorldSize] = std::to_string(layout.members.size());
  env[kRank] = std::to_string(GlobalRank(layout, layout.self));
  env[kLocalRank] = "0";
  return env;
}

OutputDirs OutputDirsFor(const std::string& base_output_dir, const std::string& trial_id) {
  OutputDirs dirs;
  if (base_output_dir.empty()) return dirs;
  std::string base = WithSlash(base_output_dir);
  if (!trial_id.empty()) base += trial_id + "/";
  dirs.model_dir = base + "model/";
  dirs.checkpoint_dir = base + "checkpoints/";
  dirs.tensorboard_log_dir = base + "logs/";
  return dirs;
}

void EncodeOutputDirs(const OutputDirs& dirs, EnvMap* env) {
  if (!dirs.model_dir.empty()) (*env)[kAipModelDir] = dirs.model_dir;
  if (!dirs.checkpoint_dir.empty()) (*env)[kAipCheckpointDir] = dirs.checkpoint_dir;
  if (!dirs.tensorboard_log_dir.empty()) (*env)[kAipTensorboardLogDir] = dirs.tensorboard_log_dir;
}

OutputDirs DecodeOutputDirs(const EnvMap& env) {
  auto get = [&](const char* name) {
    const std::string* v = Find(env, name);
    return v ? *v : std::string();
  };
  return {get(kAipModelDir), get(kAipCheckpointDir), get(kAipTensorboardLogDir)};
}

std::string ReplicaRole::Describe() const {
  if (!distributed()) return "single process";
  return "rank " + std::to_string(rank) + "/" + std::to_string(world_size) + " (master " +
         master_addr + ":" + std::to_string(master_port) + ", from " + source + ")";
}

StatusOr<ClusterDocument> DecodeClusterSpec(const std::string& text) {
  std::vector<std::vector<std::string>> keys;
  for (int p = 0; p < kPoolCount; ++p) keys.push_back({ClusterSpecPoolName(p)});
  return DecodeDocument(kClusterSpec, text, keys, /*evaluator_outside=*/false);
}

StatusOr<ClusterDocument> DecodeTfConfig(const std::string& text) {
  return DecodeDocument(kTfConfig, text, {{"chief", "master"}, {"worker"}, {"ps"}},
                        /*evaluator_outside=*/true);
}

StatusOr<ReplicaRole> DecodeRole(const EnvMap& env) {
  for (const char* name : {kMasterAddr, kMasterPort, kWorldSize, kRank}) {
    if (Find(env, name) == nullptr) continue;
    TY_ASSIGN_OR_RETURN(ReplicaRole role, FromTorchVariables(env));
    TY_RETURN_IF_ERROR(CheckAgainstClusterSpec(env, role));
    return role;
  }
  if (const std::string* spec = Find(env, kClusterSpec)) {
    TY_ASSIGN_OR_RETURN(ClusterDocument doc, DecodeClusterSpec(*spec));
    return RoleFromDocument(kClusterSpec, doc);
  }
  if (const std::string* tf = Find(env, kTfConfig)) {
    TY_ASSIGN_OR_RETURN(ClusterDocument doc, DecodeTfConfig(*tf));
    return RoleFromDocument(kTfConfig, doc);
  }
  ReplicaRole single;
  single.source = "single";
  return single;
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

EnvMap CurrentEnvironment() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace trainyard::replica_contract
