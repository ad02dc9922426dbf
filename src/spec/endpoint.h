// Endpoint and DeployedModel (google/cloud/aiplatform/v1/endpoint.proto) and the requests that
// deploy and undeploy models (endpoint_service.proto), as the endpoint controller keeps them;
// the protojson rules and wording (protojson/reader.h): unknown fields are refused with their
// path, snake_case names accepted, output-only fields accepted and dropped (a described endpoint
// can be sent back as it is).
//
//   Endpoint {displayName (required, <= 128 characters), description, labels, trafficSplit}
//     output-only: name, deployedModels, etag, createTime, updateTime, ...
//   DeployedModel {id (optional, 1-10 digits), model (required: a model's name or id, with
//     @version or @alias), displayName, dedicatedResources | automaticResources,
//     serviceAccount, disableContainerLogging, enableAccessLogging}
//     dedicatedResources {machineSpec {machineType, acceleratorType, acceleratorCount},
//       minReplicaCount (>= 1), maxReplicaCount (>= min; 0 = min), autoscalingMetricSpecs
//       [{metricName, target}], spot}; automaticResources {minReplicaCount, maxReplicaCount}
//   DeployModelRequest {endpoint, deployedModel (required), trafficSplit}
//   UndeployModelRequest {endpoint, deployedModelId (required), trafficSplit}
//
// Traffic splits map deployed model ids to percentages (0-100) that add up to 100, or are empty
// (the endpoint takes no traffic). The rules of deploy and undeploy are Vertex's (below).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "spec/custom_job.h"  // MachineSpec (machine_type "" = the default serving machine)

namespace trainyard::spec {

inline constexpr std::string_view kEndpoints = "endpoints";
inline constexpr size_t kMaxEndpointDisplayNameChars = 128;
inline constexpr size_t kMaxEndpointDescriptionChars = 8192;
// A deployed model's replicas: Trainyard runs them on its own hosts, so a bound keeps one deploy
// from asking for thousands of processes.
inline constexpr int32_t kMaxServingReplicas = 64;

using TrafficSplit = std::map<std::string, int32_t>;

// Decodes an Endpoint create body into the JSON the controller stores (input fields only, empty
// ones left out). INVALID_ARGUMENT naming the field for an unknown or mistyped field, a missing
// or too long displayName, a too long description, labels that break their rules, a trafficSplit
// that is not a map of percentages, or an encryptionSpec / network (not supported).
StatusOr<nlohmann::json> DecodeEndpoint(const nlohmann::json& j);
// A MachineSpec of serving or batch prediction resources (machineType, acceleratorType,
// acceleratorCount; tpuTopology and reservationAffinity refused) at `path`.
StatusOr<MachineSpec> DecodeServingMachineSpec(const nlohmann::json& j, const std::string& path);
// OK when every key is a field of Endpoint (input or output-only); a PATCH body's check.
Status CheckEndpointFieldNames(const nlohmann::json& j);

struct DeploymentResources {
  bool automatic = false;  // automaticResources: the server picks the machine
  MachineSpec machine;
  int32_t min_replicas = 1;
  int32_t max_replicas = 1;  // >= min_replicas; replicas scale between them on load
  // {metricName, target}: e.g. {"aiplatform.googleapis.com/prediction/online/cpu/utilization",
  // 60}. Empty = CPU utilization at 60 %, Vertex's default.
  std::vector<std::pair<std::string, int32_t>> autoscaling;
  bool spot = false;
};

struct DeployedModelSpec {
  std::string id;     // "" = the server assigns one
  std::string model;  // as sent: "projects/P/locations/L/models/M[@v]" or "M[@v]"
  std::string display_name;
  DeploymentResources resources;
  std::string service_account;
  bool disable_container_logging = false;
  bool enable_access_logging = false;
};

// The DeployedModel's input fields as proto3 JSON (what the controller stores and then completes
// with id, createTime, modelVersionId).
nlohmann::json DeployedModelJson(const DeployedModelSpec& spec);

struct DeployModelRequest {
  DeployedModelSpec deployed_model;
  TrafficSplit traffic_split;  // may name "0": the model being deployed
};
struct UndeployModelRequest {
  std::string deployed_model_id;
  TrafficSplit traffic_split;
};

// INVALID_ARGUMENT (with the field path) for malformed JSON, unknown fields, a missing
// deployedModel / model / deployedModelId, an id that is not 1-10 digits, both or neither kind
// of resources... (see the top of this file), or replica counts out of range.
StatusOr<DeployModelRequest> ParseDeployModelRequest(std::string_view body);
StatusOr<UndeployModelRequest> ParseUndeployModelRequest(std::string_view body);
// A stored DeployedModel back into its spec (the inverse of DeployedModelJson plus `id`).
StatusOr<DeployedModelSpec> DecodeDeployedModel(const nlohmann::json& j, const std::string& path);

// `split` is valid for an endpoint whose deployed models are `deployed`: every key names one of
// them, every value is 0-100, and the values add up to 100 (or the split is empty).
// INVALID_ARGUMENT at `path` otherwise.
Status CheckTrafficSplit(const TrafficSplit& split, const std::set<std::string>& deployed,
                         const std::string& path);

// The endpoint's split once `new_id` is deployed: `requested` (with "0" meaning `new_id`) when
// given; else the current split, or {new_id: 100} when the endpoint had no traffic.
// INVALID_ARGUMENT when `requested` breaks CheckTrafficSplit over `deployed` + new_id.
StatusOr<TrafficSplit> TrafficAfterDeploy(const TrafficSplit& current,
                                          const TrafficSplit& requested,
                                          const std::set<std::string>& deployed,
                                          const std::string& new_id);
// The split once `removed_id` is undeployed: empty when it was the last model; else `requested`
// when given (it must give `removed_id` no traffic); else the current split, which must not give
// it traffic. FAILED_PRECONDITION naming the fix when the model would keep traffic.
StatusOr<TrafficSplit> TrafficAfterUndeploy(const TrafficSplit& current,
                                            const TrafficSplit& requested,
                                            const std::set<std::string>& deployed,
                                            const std::string& removed_id);

}  // namespace trainyard::spec
