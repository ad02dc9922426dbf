#include "controller/endpoint_internal.h"

#include <sys/stat.h>

#include <random>

#include "common/beneath.h"
#include "common/bucket_path.h"
#include "controller/endpoint_controller.h"
#include "executor/tcp_port.h"
#include "protojson/reader.h"

namespace trainyard::controller::endpoint_internal {

using nlohmann::json;

std::string ParentOf(const std::string& name) {
  // projects/P/locations/L/endpoints/E: the first four segments.
  size_t pos = 0;
  for (int i = 0; i < 4 && pos != std::string::npos; ++i) pos = name.find('/', pos + 1);
  return pos == std::string::npos ? name : name.substr(0, pos);
}

std::string IdOf(const std::string& name) { return name.substr(name.rfind('/') + 1); }

std::string GroupOf(const std::string& endpoint, const std::string& deployed_id) {
  return endpoint + "/deployedModels/" + deployed_id;
}

spec::TrafficSplit SplitOf(const json& endpoint) {
  spec::TrafficSplit split;
  const json t = endpoint.value("trafficSplit", json::object());
  if (!t.is_object()) return split;
  for (const auto& [id, p] : t.items()) {
    if (p.is_number_integer()) split[id] = p.get<int32_t>();
  }
  return split;
}

json SplitJson(const spec::TrafficSplit& split) {
  json j = json::object();
  for (const auto& [id, p] : split) j[id] = p;
  return j;
}

void SetSplit(json& endpoint, const spec::TrafficSplit& split) {
  if (split.empty()) {
    endpoint.erase("trafficSplit");
  } else {
    endpoint["trafficSplit"] = SplitJson(split);
  }
}

std::set<std::string> DeployedIds(const json& endpoint) {
  std::set<std::string> ids;
  for (const json& d : endpoint.value("deployedModels", json::array())) {
    if (d.is_object()) ids.insert(d.value("id", ""));
  }
  return ids;
}

void RemoveDeployedModel(json& endpoint, const std::string& id) {
  json kept = json::array();
  for (const json& d : endpoint.value("deployedModels", json::array())) {
    if (d.value("id", "") != id) kept.push_back(d);
  }
  if (kept.empty()) {
    endpoint.erase("deployedModels");
  } else {
    endpoint["deployedModels"] = kept;
  }
}

void ReplaceDeployedModel(json& endpoint, const json& deployed_model) {
  json& list = endpoint["deployedModels"];
  if (!list.is_array()) list = json::array();
  for (json& d : list) {
    if (d.value("id", "") == deployed_model.value("id", "")) {
      d = deployed_model;
      return;
    }
  }
  list.push_back(deployed_model);
}

std::string PickByTraffic(const spec::TrafficSplit& split) {
  int total = 0;
  for (const auto& [id, p] : split) total += p;
  if (total <= 0) return "";
  static thread_local std::mt19937 rng{std::random_device{}()};
  int draw = std::uniform_int_distribution<int>(0, total - 1)(rng);
  for (const auto& [id, p] : split) {
    if (draw < p) return id;
    draw -= p;
  }
  return split.rbegin()->first;
}

json Published(json endpoint) {
  if (endpoint.contains("deployedModels") && endpoint["deployedModels"].empty()) {
    endpoint.erase("deployedModels");
  }
  return endpoint;
}

StatusOr<json> ApplyMutation(const json& deployed_model, const json& given,
                             const std::string& mask) {
  json out = deployed_model;
  size_t start = 0;
  while (start <= mask.size()) {
    size_t comma = mask.find(',', start);
    std::string path = mask.substr(start, comma == std::string::npos ? comma : comma - start);
    start = comma == std::string::npos ? mask.size() + 1 : comma + 1;
    if (path.empty()) continue;
    std::string camel;
    for (size_t dot = 0, from = 0; from <= path.size(); from = dot + 1) {
      dot = path.find('.', from);
      if (dot == std::string::npos) dot = path.size();
      camel += (camel.empty() ? "" : ".") + protojson::SnakeToCamel(path.substr(from, dot - from));
    }
    if (camel == "displayName" || camel == "disableContainerLogging" ||
        camel == "enableAccessLogging") {
      out[camel] = given.value(camel, json());
      continue;
    }
    const std::string prefix = "dedicatedResources.";
    const std::string field = camel.substr(std::min(prefix.size(), camel.size()));
    if (camel.starts_with(prefix) && (field == "minReplicaCount" || field == "maxReplicaCount" ||
                                      field == "autoscalingMetricSpecs")) {
      if (!out.contains("dedicatedResources")) {
        return InvalidFieldError("updateMask", "'" + path +
                                                   "': the model is deployed with "
                                                   "automaticResources; redeploy it instead");
      }
      out["dedicatedResources"][field] =
          given.value("dedicatedResources", json::object()).value(field, json());
      if (out["dedicatedResources"][field].is_null()) out["dedicatedResources"].erase(field);
      continue;
    }
    return InvalidFieldError(
        "updateMask", "'" + path +
                          "' cannot be changed on a deployed model; the mutable fields are "
                          "dedicatedResources.minReplicaCount, dedicatedResources.maxReplicaCount, "
                          "dedicatedResources.autoscalingMetricSpecs, displayName, "
                          "disableContainerLogging, enableAccessLogging");
  }
  TY_ASSIGN_OR_RETURN(spec::DeployedModelSpec checked,
                      spec::DecodeDeployedModel(out, "deployedModel"));
  json normal = spec::DeployedModelJson(checked);
  for (const char* k : {"id", "model", "modelVersionId", "createTime"}) {
    if (out.contains(k)) normal[k] = out[k];
  }
  return normal;
}

bool IsBertClassifierArtifact(const std::string& artifact_uri) {
  StatusOr<GcsUri> uri = ParseGcsUri(artifact_uri);
  if (!uri.ok()) return false;
  std::string rel = uri->bucket + (uri->object.empty() ? "" : "/" + uri->object);
  while (rel.ends_with('/')) rel.pop_back();
  StatusOr<BeneathDir> root = BeneathDir::Open(BucketRoot());
  if (!root.ok()) return false;
  auto regular = [&](const std::string& file) {
    auto st = root->Stat(rel + "/" + file);
    return st.ok() && S_ISREG(st->st_mode);
  };
  return regular("config.json") && regular("vocab.txt") &&
         (regular("model.safetensors") || regular("pytorch_model.bin"));
}

StatusOr<int> PickLocalPort() { return executor::PickFreeTcpPort("127.0.0.1"); }

bool IsPrebuiltPredictionImage(const std::string& image_uri) {
  for (const char* marker : {"/vertex-ai/prediction/", "/cloud-aiplatform/prediction/",
                             "/cloud-ml-public/prediction/"}) {
    if (image_uri.find(marker) != std::string::npos) return true;
  }
  return false;
}

bool IsNativeRuntimeImage(const std::string& image_uri) {
  const std::string native = kNativeServingImage;
  return image_uri.empty() || image_uri == native || image_uri.starts_with(native + ":") ||
         IsPrebuiltPredictionImage(image_uri);
}

}  // namespace trainyard::controller::endpoint_internal
