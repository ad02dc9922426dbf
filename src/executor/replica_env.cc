#include "executor/replica_env.h"

namespace trainyard::executor {
namespace {

namespace rc = replica_contract;

rc::ClusterLayout Layout(const ReplicaEnvInput& in) {
  return {in.members, in.self, in.trial_id, in.job_spec_json, in.tf_config_primary_role};
}

}  // namespace

std::string ClusterSpecJson(const ReplicaEnvInput& in) { return rc::EncodeClusterSpec(Layout(in)); }

std::string TfConfigJson(const ReplicaEnvInput& in) { return rc::EncodeTfConfig(Layout(in)); }

EnvMap PlatformEnv(const ReplicaEnvInput& in) {
  const rc::ClusterLayout layout = Layout(in);
  EnvMap env = rc::EncodeRoleVariables(layout);
  env[rc::kClusterSpec] = rc::EncodeClusterSpec(layout);
  env[rc::kTfConfig] = rc::EncodeTfConfig(layout);
  rc::EncodeOutputDirs(rc::OutputDirsFor(in.base_output_dir, in.trial_id), &env);
  env[rc::kCloudMlJobId] = in.job_id;
  if (!in.trial_id.empty()) env[rc::kCloudMlTrialId] = in.trial_id;
  env[rc::kCloudMlHpMetricFile] = in.hp_metric_file.string();
  std::string devices;
  for (int g : in.gpus) {
    if (!devices.empty()) devices += ",";
    devices += std::to_string(g);
  }
  env[rc::kCudaVisibleDevices] = devices;
  if (in.self < in.members.size()) {
    const std::string& address = in.members[in.self].address;
    if (size_t colon = address.rfind(':'); colon != std::string::npos) {
      env[rc::kTrainyardReplicaPort] = address.substr(colon + 1);
    }
  }
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
    if (!rc::IsPlatformOwned(k)) env[k] = v;
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

}  // namespace trainyard::executor
