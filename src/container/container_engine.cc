#include "container/container_engine.h"

#include <cstdio>

#include "common/bucket_path.h"

namespace trainyard::container {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

uint32_t Fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

std::string ContainerName(std::string_view job_id, int pool_index, int replica_index) {
  std::string job;
  bool changed = false;
  for (char c : job_id) {
    job += NameChar(c) ? c : '_';
    changed |= !NameChar(c);
  }
  if (changed || job.empty()) {
    char hash[16];
    std::snprintf(hash, sizeof(hash), "%08x", Fnv1a(job_id));
    job += (job.empty() ? "" : "-") + std::string(hash);
  }
  return "trainyard-" + job + "-wp" + std::to_string(pool_index) + "-" +
         std::to_string(replica_index);
}

std::map<std::string, std::string> ContainerEnv(std::map<std::string, std::string> env) {
  for (const char* key : {"AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR"}) {
    auto it = env.find(key);
    if (it != env.end() && IsGcsUri(it->second)) {
      it->second = std::string(kGcsMountPoint) + "/" + it->second.substr(5);  // "gs://" -> "/gcs/"
    }
  }
  env["TRAINYARD_BUCKET_ROOT"] = std::string(kGcsMountPoint);
  return env;
}

}  // namespace trainyard::container
