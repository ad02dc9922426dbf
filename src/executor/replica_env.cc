#include "executor/replica_env.h"

#include <nlohmann/json.hpp>

extern char** environ;

namespace trainyard::executor {
namespace {

using OJson = nlohmann::ordered_json;

const char* TfRole(int pool_index) {
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

// Pools 0-3 in order, each with its replicas' addresses in index order.
std::map<int, std::vector<std::string>> AddressesByPool(const ReplicaEnvInput& in) {
  std::map<int, std::map<int, std::string>> by_pool;
  for (const auto& m : in.members) by_pool[m.pool_index][m.replica_index] = m.address;
  std::map<int, std::vector<std::string>> out;
  for (const auto& [pool, replicas] : by_pool) {
    for (const auto& [index, address] : replicas) out[pool].push_back(address);
  }
  return out;
}

OJson Document(const ReplicaEnvInput& in, OJson cluster, const std::string& task_type) {
  const ClusterMember& self = in.members.at(in.self);
  OJson doc;
  doc["cluster"] = std::move(cluster);
  doc["environment"] = "cloud";
  doc["task"] = OJson{{"type", task_type}, {"index", self.replica_index}, {"trial", in.trial_id}};
  if (!in.job_spec_json.empty()) doc["job"] = in.job_spec_json;
  return doc;
}

std::string WithSlash(std::string s) {
  if (!s.empty() && s.back() != '/') s += '/';
  return s;
}

bool IsPlatformOwned(const std::string& name) {
  static const char* const kExact[] = {"CLUSTER_SPEC", "TF_CONFIG",           "MASTER_ADDR",
                                       "MASTER_PORT",  "WORLD_SIZE",          "RANK",
                                       "LOCAL_RANK",   "CUDA_VISIBLE_DEVICES"};
  for (const char* e : kExact) {
    if (name == e) return true;
  }
  return name.starts_with("AIP_") || name.starts_with("CLOUD_ML_");
}

}  // namespace

std::string TaskName(int pool_index, int replica_index) {
  return "workerpool" + std::to_string(pool_index) + "-" + std::to_string(replica_index);
}

std::string ClusterSpecJson(const ReplicaEnvInput& in) {
  OJson cluster = OJson::object();
  for (const auto& [pool, addresses] : AddressesByPool(in)) {
    cluster["workerpool" + std::to_string(pool)] = addresses;
  }
  return Document(in, std::move(cluster),
                  "workerpool" + std::to_string(in.members.at(in.self).pool_index))
      .dump();
}

std::string TfConfigJson(const ReplicaEnvInput& in) {
  OJson cluster = OJson::object();
  for (const auto& [pool, addresses] : AddressesByPool(in)) {
    if (pool <= 2) cluster[TfRole(pool)] = addresses;  // evaluators are not part of the cluster
  }
  return Document(in, std::move(cluster), TfRole(in.members.at(in.self).pool_index)).dump();
}

EnvMap PlatformEnv(const ReplicaEnvInput& in) {
  EnvMap env;
  env["CLUSTER_SPEC"] = ClusterSpecJson(in);
  env["TF_CONFIG"] = TfConfigJson(in);
  // Global rank: pool 0 first, then pools 1, 2, 3 in index order (members are sorted that way).
  const ClusterMember* master = nullptr;
  int rank = 0;
  for (size_t i = 0; i < in.members.size(); ++i) {
    if (master == nullptr || in.members[i].pool_index < master->pool_index) master = &in.members[i];
    if (i < in.self) ++rank;
  }
  if (master != nullptr) {
    const std::string& addr = master->address;
    size_t colon = addr.rfind(':');
    env["MASTER_ADDR"] = addr.substr(0, colon);
    env["MASTER_PORT"] = colon == std::string::npos ? "" : addr.substr(colon + 1);
  }
  env["WORLD_SIZE"] = std::to_string(in.members.size());
  env["RANK"] = std::to_string(rank);
  env["LOCAL_RANK"] = "0";
  if (!in.base_output_dir.empty()) {
    std::string base = WithSlash(in.base_output_dir);
    if (!in.trial_id.empty()) base += in.trial_id + "/";
    env["AIP_MODEL_DIR"] = base + "model/";
    env["AIP_CHECKPOINT_DIR"] = base + "checkpoints/";
    env["AIP_TENSORBOARD_LOG_DIR"] = base + "logs/";
  }
  env["CLOUD_ML_JOB_ID"] = in.job_id;
  if (!in.trial_id.empty()) env["CLOUD_ML_TRIAL_ID"] = in.trial_id;
  env["CLOUD_ML_HP_METRIC_FILE"] = in.hp_metric_file.string();
  std::string devices;
  for (int g : in.gpus) {
    if (!devices.empty()) devices += ",";
    devices += std::to_string(g);
  }
  env["CUDA_VISIBLE_DEVICES"] = devices;
  return env;
}

std::string ExpandEnvReferences(const std::string& value, const EnvMap& vars) {
  std::string out;
  size_t i = 0;
  while (i < value.size()) {
    if (value.compare(i, 3, "$$(") == 0) {
      out += "$(";
      i += 3;
      continue;
    }
    if (value.compare(i, 2, "$(") == 0) {
      size_t close = value.find(')', i + 2);
      if (close != std::string::npos) {
        auto it = vars.find(value.substr(i + 2, close - i - 2));
        if (it != vars.end()) {
          out += it->second;
          i = close + 1;
          continue;
        }
      }
    }
    out += value[i++];
  }
  return out;
}

EnvMap BuildReplicaEnv(const EnvMap& inherited, const EnvMap& user, const ReplicaEnvInput& in,
                       const EnvMap& extra) {
  EnvMap env;
  for (const auto& [k, v] : inherited) {
    if (!IsPlatformOwned(k)) env[k] = v;
  }
  EnvMap platform = PlatformEnv(in);
  for (const auto& [k, v] : extra) platform[k] = v;
  // References resolve against the platform ("service") variables and the user's raw values.
  EnvMap refs = user;
  for (const auto& [k, v] : platform) refs[k] = v;
  for (const auto& [k, v] : user) env[k] = ExpandEnvReferences(v, refs);
  if (!env.count("PYTHONUNBUFFERED")) env["PYTHONUNBUFFERED"] = "1";
  if (in.cpu_threads > 0) {
    // The server's own setting (inherited) is not the job's: only the job's env wins.
    for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}) {
      if (!user.count(name)) env[name] = std::to_string(in.cpu_threads);
    }
  }
  for (const auto& [k, v] : platform) env[k] = v;
  return env;
}

EnvMap CurrentEnvironment() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace trainyard::executor
