// What endpoint_controller.cc and endpoint_replicas.cc share: the stored shape of deployments and
// small functions over endpoints' JSON. Not a public interface of the controller library.
//
// An endpoint's runtime state (beside the Endpoint resource, one store record):
//   {"deployments": {"<deployedModelId>": {
//      "phase": "DEPLOYING" | "DEPLOYED" | "UNDEPLOYING",
//      "operation": the deploy's or undeploy's operation name,
//      "deployedModel": the DeployedModel as it is published,
//      "modelDisplayName", "requestedSplit": the deploy's trafficSplit ("0" = this model),
//      "serving": {"runtime": "native" | "container", "imageUri", "command", "args", "env",
//                  "predictRoute", "healthRoute", "storageUri", "machineType", ...},
//      "replicas": [{"job": CustomJob name, "port": N}], "failures": replica failures while
//      deploying, "creator": who deployed it}}}
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/endpoint.h"

namespace trainyard::controller::endpoint_internal {

inline constexpr char kDeploying[] = "DEPLOYING";
inline constexpr char kDeployed[] = "DEPLOYED";
inline constexpr char kUndeploying[] = "UNDEPLOYING";
inline constexpr char kDeployMetadata[] =
    "type.googleapis.com/google.cloud.aiplatform.v1.DeployModelOperationMetadata";
inline constexpr char kUndeployMetadata[] =
    "type.googleapis.com/google.cloud.aiplatform.v1.UndeployModelOperationMetadata";
inline constexpr char kMutateMetadata[] =
    "type.googleapis.com/google.cloud.aiplatform.v1.MutateDeployedModelOperationMetadata";
inline constexpr char kDeployResponse[] =
    "type.googleapis.com/google.cloud.aiplatform.v1.DeployModelResponse";
inline constexpr char kUndeployResponse[] =
    "type.googleapis.com/google.cloud.aiplatform.v1.UndeployModelResponse";
inline constexpr char kMutateResponse[] =
    "type.googleapis.com/google.cloud.aiplatform.v1.MutateDeployedModelResponse";

// "projects/P/locations/L" of "projects/P/locations/L/endpoints/E"; the last segment of a name.
std::string ParentOf(const std::string& name);
std::string IdOf(const std::string& name);
// The ReplicaRouter group of a deployed model: "<endpoint>/deployedModels/<id>".
std::string GroupOf(const std::string& endpoint, const std::string& deployed_id);

spec::TrafficSplit SplitOf(const nlohmann::json& endpoint);  // its trafficSplit
nlohmann::json SplitJson(const spec::TrafficSplit& split);
// Sets (or, when empty, removes) the endpoint's trafficSplit.
void SetSplit(nlohmann::json& endpoint, const spec::TrafficSplit& split);
// The ids in the endpoint's deployedModels.
std::set<std::string> DeployedIds(const nlohmann::json& endpoint);
void RemoveDeployedModel(nlohmann::json& endpoint, const std::string& id);
// Replaces the entry of deployedModels with the same id, or appends it.
void ReplaceDeployedModel(nlohmann::json& endpoint, const nlohmann::json& deployed_model);
// A deployed model id drawn by the split's weights; "" when the split is empty or all zero.
std::string PickByTraffic(const spec::TrafficSplit& split);
// The endpoint as answered: its stored body (deployedModels left out when empty).
nlohmann::json Published(nlohmann::json endpoint);

// `deployed_model` with the fields of `mask` (comma-separated, lowerCamelCase or snake_case;
// dedicatedResources.minReplicaCount / maxReplicaCount / autoscalingMetricSpecs,
// disableContainerLogging, enableAccessLogging, displayName) taken from `given`, checked as a
// DeployedModel. INVALID_ARGUMENT naming updateMask for any other path.
StatusOr<nlohmann::json> ApplyMutation(const nlohmann::json& deployed_model,
                                       const nlohmann::json& given, const std::string& mask);

// Whether gs:// `artifact_uri` (under the bucket root, links not followed) holds a BERT
// classifier `trainyard-bert serve` loads: config.json, vocab.txt, and model.safetensors or
// pytorch_model.bin.
bool IsBertClassifierArtifact(const std::string& artifact_uri);
StatusOr<int> PickLocalPort();
// Vertex's prebuilt prediction images (".../prediction/..." of Vertex's and AI Platform's
// registries).
bool IsPrebuiltPredictionImage(const std::string& image_uri);
// Whether a model with this containerSpec.imageUri ("" = none) is served by the native runtime:
// no image, trainyard/bert-serve[:TAG] or a prebuilt prediction image.
bool IsNativeRuntimeImage(const std::string& image_uri);

}  // namespace trainyard::controller::endpoint_internal
