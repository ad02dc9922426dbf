#include <numeric>

#include "protojson/parse.h"
#include "protojson/reader.h"
#include "protojson/writer.h"
#include "spec/custom_job_validation.h"
#include "spec/endpoint.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;
using Fields = protojson::ObjectReader;
using Writer = protojson::ObjectWriter;

constexpr char kCpuUtilization[] = "aiplatform.googleapis.com/prediction/online/cpu/utilization";
constexpr char kAcceleratorDutyCycle[] =
    "aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle";

StatusOr<Fields> OpenEndpoint(const json& j) {
  return Fields::Open(
      j, "", {"displayName", "description", "labels", "trafficSplit", "encryptionSpec", "network"},
      {"name", "deployedModels", "etag", "createTime", "updateTime", "trainyardInfo",
       "enablePrivateServiceConnect", "privateServiceConnectConfig", "modelDeploymentMonitoringJob",
       "predictRequestResponseLoggingConfig", "dedicatedEndpointEnabled", "dedicatedEndpointDns",
       "satisfiesPzs", "satisfiesPzi", "clientConnectionConfig", "genAiAdvancedFeaturesConfig"},
      "endpoint");
}

StatusOr<TrafficSplit> ReadTrafficSplit(const Fields& f, std::string_view name) {
  TrafficSplit split;
  const json* v = f.Get(name);
  if (v == nullptr) return split;
  const std::string path = f.PathOf(name);
  if (!v->is_object()) return protojson::InvalidValueError(path, "map", *v, "expected an object");
  for (const auto& [id, percent] : v->items()) {
    TY_ASSIGN_OR_RETURN(int32_t p, protojson::ReadInt32(percent, path + "[\"" + id + "\"]"));
    split[id] = p;
  }
  return split;
}

}  // namespace

StatusOr<MachineSpec> DecodeServingMachineSpec(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"machineType", "acceleratorType", "acceleratorCount",
                                              "tpuTopology", "reservationAffinity"}));
  MachineSpec m;
  TY_RETURN_IF_ERROR(f.String("machineType", &m.machine_type));
  TY_RETURN_IF_ERROR(f.String("acceleratorType", &m.accelerator_type));
  TY_RETURN_IF_ERROR(f.Int32("acceleratorCount", &m.accelerator_count));
  TY_RETURN_IF_ERROR(f.RejectIfSet("tpuTopology", "remove it (no TPUs)"));
  TY_RETURN_IF_ERROR(f.RejectIfSet("reservationAffinity", "remove it (no reservations)"));
  if (m.accelerator_count < 0) {
    return protojson::FieldError(f.PathOf("acceleratorCount"), "must be 0 or more");
  }
  if (m.accelerator_type == "ACCELERATOR_TYPE_UNSPECIFIED") m.accelerator_type.clear();
  return m;
}

namespace {

StatusOr<std::pair<std::string, int32_t>> ReadMetric(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"metricName", "target"}));
  std::pair<std::string, int32_t> m;
  TY_RETURN_IF_ERROR(f.String("metricName", &m.first));
  TY_RETURN_IF_ERROR(f.Int32("target", &m.second));
  if (m.first != kCpuUtilization && m.first != kAcceleratorDutyCycle) {
    return protojson::FieldError(f.PathOf("metricName"),
                                 "'" + m.first + "' is not a metric Trainyard scales on; use " +
                                     kCpuUtilization + " or " + kAcceleratorDutyCycle);
  }
  if (m.second == 0) m.second = 60;
  if (m.second < 1 || m.second > 100) {
    return protojson::FieldError(f.PathOf("target"), "a percentage, 1 to 100");
  }
  return m;
}

Status CheckReplicaCounts(DeploymentResources* r, const Fields& f) {
  if (r->min_replicas < 1 || r->min_replicas > kMaxServingReplicas) {
    return protojson::FieldError(f.PathOf("minReplicaCount"),
                                 "must be 1 to " + std::to_string(kMaxServingReplicas) + ", got " +
                                     std::to_string(r->min_replicas));
  }
  if (r->max_replicas == 0) r->max_replicas = r->min_replicas;
  if (r->max_replicas < r->min_replicas || r->max_replicas > kMaxServingReplicas) {
    return protojson::FieldError(f.PathOf("maxReplicaCount"),
                                 "must be minReplicaCount (" + std::to_string(r->min_replicas) +
                                     ") to " + std::to_string(kMaxServingReplicas) + ", got " +
                                     std::to_string(r->max_replicas));
  }
  return Status::Ok();
}

StatusOr<DeploymentResources> ReadDedicated(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f,
                      Fields::Open(j, path,
                                   {"machineSpec", "minReplicaCount", "maxReplicaCount",
                                    "requiredReplicaCount", "autoscalingMetricSpecs", "spot"}));
  DeploymentResources r;
  r.max_replicas = 0;  // absent = minReplicaCount (CheckReplicaCounts)
  std::optional<MachineSpec> machine;
  TY_RETURN_IF_ERROR(f.Message("machineSpec", &machine, DecodeServingMachineSpec));
  if (machine) r.machine = *machine;
  TY_RETURN_IF_ERROR(f.Int32("minReplicaCount", &r.min_replicas));
  TY_RETURN_IF_ERROR(f.Int32("maxReplicaCount", &r.max_replicas));
  int32_t required = 0;
  TY_RETURN_IF_ERROR(f.Int32("requiredReplicaCount", &required));
  TY_RETURN_IF_ERROR(f.Repeated("autoscalingMetricSpecs", &r.autoscaling, ReadMetric));
  TY_RETURN_IF_ERROR(f.Bool("spot", &r.spot));
  TY_RETURN_IF_ERROR(CheckReplicaCounts(&r, f));
  if (required < 0 || required > r.min_replicas) {
    return protojson::FieldError(f.PathOf("requiredReplicaCount"), "must be 0 to minReplicaCount");
  }
  return r;
}

StatusOr<DeploymentResources> ReadAutomatic(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"minReplicaCount", "maxReplicaCount"}));
  DeploymentResources r;
  r.automatic = true;
  r.max_replicas = 0;  // absent = minReplicaCount (CheckReplicaCounts)
  TY_RETURN_IF_ERROR(f.Int32("minReplicaCount", &r.min_replicas));
  TY_RETURN_IF_ERROR(f.Int32("maxReplicaCount", &r.max_replicas));
  TY_RETURN_IF_ERROR(CheckReplicaCounts(&r, f));
  return r;
}

Status CheckDeployedModelId(const std::string& id, const std::string& path) {
  bool digits =
      !id.empty() && id.size() <= 10 && id.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    return protojson::FieldError(path, "'" + id + "' is not 1 to 10 digits (or leave it out)");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<DeployedModelSpec> DecodeDeployedModel(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Open(j, path,
                   {"id", "model", "displayName", "dedicatedResources", "automaticResources",
                    "sharedResources", "serviceAccount", "disableContainerLogging",
                    "enableAccessLogging", "explanationSpec", "disableExplanations"},
                   {"modelVersionId", "createTime", "privateEndpoints", "status", "systemLabels",
                    "trainyardInfo", "fasterDeploymentConfig", "checkpointId"}));
  DeployedModelSpec s;
  TY_RETURN_IF_ERROR(f.String("id", &s.id));
  if (!s.id.empty()) TY_RETURN_IF_ERROR(CheckDeployedModelId(s.id, f.PathOf("id")));
  TY_RETURN_IF_ERROR(f.Require("model", "the model to deploy: projects/P/locations/L/models/M"));
  TY_RETURN_IF_ERROR(f.String("model", &s.model));
  TY_RETURN_IF_ERROR(f.String("displayName", &s.display_name));
  TY_RETURN_IF_ERROR(f.String("serviceAccount", &s.service_account));
  TY_RETURN_IF_ERROR(f.Bool("disableContainerLogging", &s.disable_container_logging));
  TY_RETURN_IF_ERROR(f.Bool("enableAccessLogging", &s.enable_access_logging));
  bool disable_explanations = false;
  TY_RETURN_IF_ERROR(f.Bool("disableExplanations", &disable_explanations));
  TY_RETURN_IF_ERROR(f.RejectIfSet("explanationSpec", "remove it (no explanations)"));
  TY_RETURN_IF_ERROR(
      f.RejectIfSet("sharedResources", "use dedicatedResources (no deployment resource pools)"));
  if (f.Has("dedicatedResources") && f.Has("automaticResources")) {
    return protojson::FieldError(f.PathOf("automaticResources"),
                                 "give dedicatedResources or automaticResources, not both");
  }
  std::optional<DeploymentResources> resources;
  TY_RETURN_IF_ERROR(f.Message("dedicatedResources", &resources, ReadDedicated));
  TY_RETURN_IF_ERROR(f.Message("automaticResources", &resources, ReadAutomatic));
  if (resources) s.resources = *resources;
  return s;
}

json DeployedModelJson(const DeployedModelSpec& s) {
  Writer resources;
  if (!s.resources.automatic) {
    Writer machine;
    machine.String("machineType", s.resources.machine.machine_type)
        .String("acceleratorType", s.resources.machine.accelerator_type)
        .Int32("acceleratorCount", s.resources.machine.accelerator_count);
    json metrics = json::array();
    for (const auto& [name, target] : s.resources.autoscaling) {
      metrics.push_back({{"metricName", name}, {"target", target}});
    }
    resources.Value("machineSpec", machine.Build()).Value("autoscalingMetricSpecs", metrics);
    resources.Bool("spot", s.resources.spot);
  }
  resources.Int32("minReplicaCount", s.resources.min_replicas)
      .Int32("maxReplicaCount", s.resources.max_replicas);
  Writer w;
  w.String("id", s.id).String("model", s.model).String("displayName", s.display_name);
  w.Value(s.resources.automatic ? "automaticResources" : "dedicatedResources", resources.Build());
  w.String("serviceAccount", s.service_account)
      .Bool("disableContainerLogging", s.disable_container_logging)
      .Bool("enableAccessLogging", s.enable_access_logging);
  return w.Build();
}

StatusOr<json> DecodeEndpoint(const json& j) {
  TY_ASSIGN_OR_RETURN(Fields f, OpenEndpoint(j));
  TY_RETURN_IF_ERROR(f.Require("displayName", "the endpoint's name in lists"));
  TY_RETURN_IF_ERROR(f.RejectIfSet("encryptionSpec", "remove it (no customer-managed keys)"));
  TY_RETURN_IF_ERROR(f.RejectIfSet("network", "remove it (endpoints are served by the server)"));
  std::string display_name, description;
  TY_RETURN_IF_ERROR(f.String("displayName", &display_name));
  TY_RETURN_IF_ERROR(f.String("description", &description));
  const std::pair<const char*, std::pair<const std::string*, size_t>> limits[] = {
      {"displayName", {&display_name, kMaxEndpointDisplayNameChars}},
      {"description", {&description, kMaxEndpointDescriptionChars}}};
  for (const auto& [field, value_limit] : limits) {
    size_t n = Utf8Length(*value_limit.first);
    if (n > value_limit.second) {
      return protojson::FieldError(f.PathOf(field), "at most " +
                                                        std::to_string(value_limit.second) +
                                                        " characters, got " + std::to_string(n));
    }
  }
  if (display_name.empty()) {
    return protojson::FieldError(f.PathOf("displayName"), "required: the endpoint's name in lists");
  }
  std::map<std::string, std::string> labels;
  TY_RETURN_IF_ERROR(f.StringMap("labels", &labels));
  TY_RETURN_IF_ERROR(ValidateLabels(labels, f.PathOf("labels")));
  TY_ASSIGN_OR_RETURN(TrafficSplit split, ReadTrafficSplit(f, "trafficSplit"));
  Writer w;
  w.String("displayName", display_name).String("description", description);
  w.StringMap("labels", labels);
  json traffic = json::object();
  for (const auto& [id, p] : split) traffic[id] = p;
  if (!split.empty()) w.Value("trafficSplit", traffic);
  return w.Build();
}

Status CheckEndpointFieldNames(const json& j) { return OpenEndpoint(j).status(); }

StatusOr<DeployModelRequest> ParseDeployModelRequest(std::string_view body) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, "", {"endpoint", "deployedModel", "trafficSplit"},
                                             {}, "deployModelRequest"));
  TY_RETURN_IF_ERROR(f.Require("deployedModel", "{\"deployedModel\": {\"model\": \"...\"}}"));
  DeployModelRequest r;
  TY_ASSIGN_OR_RETURN(r.deployed_model,
                      DecodeDeployedModel(*f.Get("deployedModel"), "deployedModel"));
  TY_ASSIGN_OR_RETURN(r.traffic_split, ReadTrafficSplit(f, "trafficSplit"));
  return r;
}

StatusOr<UndeployModelRequest> ParseUndeployModelRequest(std::string_view body) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, "", {"endpoint", "deployedModelId", "trafficSplit"},
                                             {}, "undeployModelRequest"));
  UndeployModelRequest r;
  TY_RETURN_IF_ERROR(f.Require("deployedModelId", "the id of a model deployed on the endpoint"));
  TY_RETURN_IF_ERROR(f.String("deployedModelId", &r.deployed_model_id));
  TY_ASSIGN_OR_RETURN(r.traffic_split, ReadTrafficSplit(f, "trafficSplit"));
  return r;
}

Status CheckTrafficSplit(const TrafficSplit& split, const std::set<std::string>& deployed,
                         const std::string& path) {
  int64_t sum = 0;
  for (const auto& [id, percent] : split) {
    if (!deployed.contains(id)) {
      std::string ids;
      for (const auto& d : deployed) ids += (ids.empty() ? "" : ", ") + d;
      return protojson::FieldError(
          path, "'" + id + "' is not a model deployed on this endpoint" +
                    (ids.empty() ? std::string(" (none is)") : " (deployed: " + ids + ")"));
    }
    if (percent < 0 || percent > 100) {
      return protojson::FieldError(path + "[\"" + id + "\"]",
                                   "a percentage, 0 to 100, got " + std::to_string(percent));
    }
    sum += percent;
  }
  if (!split.empty() && sum != 100) {
    return protojson::FieldError(
        path, "the percentages add up to " + std::to_string(sum) + "; they must add up to 100");
  }
  return Status::Ok();
}

StatusOr<TrafficSplit> TrafficAfterDeploy(const TrafficSplit& current,
                                          const TrafficSplit& requested,
                                          const std::set<std::string>& deployed,
                                          const std::string& new_id) {
  if (requested.empty()) {
    if (current.empty()) return TrafficSplit{{new_id, 100}};
    return current;
  }
  TrafficSplit split;
  for (const auto& [id, p] : requested) split[id == "0" ? new_id : id] = p;
  std::set<std::string> ids = deployed;
  ids.insert(new_id);
  TY_RETURN_IF_ERROR(CheckTrafficSplit(split, ids, "trafficSplit"));
  return split;
}

StatusOr<TrafficSplit> TrafficAfterUndeploy(const TrafficSplit& current,
                                            const TrafficSplit& requested,
                                            const std::set<std::string>& deployed,
                                            const std::string& removed_id) {
  std::set<std::string> remaining = deployed;
  remaining.erase(removed_id);
  if (remaining.empty()) return TrafficSplit{};
  const TrafficSplit& split = requested.empty() ? current : requested;
  auto it = split.find(removed_id);
  if (it != split.end() && it->second > 0) {
    return FailedPreconditionError(
        "deployed model " + removed_id + " has " + std::to_string(it->second) +
        "% of the endpoint's traffic; send a trafficSplit that moves it to the models that stay");
  }
  TrafficSplit out;
  for (const auto& [id, p] : split) {
    if (id != removed_id) out[id] = p;
  }
  TY_RETURN_IF_ERROR(CheckTrafficSplit(out, remaining, "trafficSplit"));
  return out;
}

}  // namespace trainyard::spec
