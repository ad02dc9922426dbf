// The environment contract between the platform and a serving replica: the variables Vertex AI
// sets inside prediction containers (its "custom container requirements", AIP_MODE_VERSION 1.0.0),
// written by the deployment code for every DeployedModel replica and read by serving runtimes
// (serving/prediction_server.h, `trainyard-bert serve`). One module owns the names, the defaults
// and the default routes; serving_contract_test.cc encodes and decodes them.
//
//   AIP_HTTP_PORT         the port the server listens on: containerSpec.ports[0].containerPort,
//                         else 8080
//   AIP_PREDICT_ROUTE     containerSpec.predictRoute, else
//                         /v1/endpoints/<AIP_ENDPOINT_ID>/deployedModels/<AIP_DEPLOYED_MODEL_ID>:predict
//   AIP_HEALTH_ROUTE      containerSpec.healthRoute, else /v1/endpoints/<E>/deployedModels/<D>
//   AIP_STORAGE_URI       the model's artifacts (gs://...; "" when the model has none)
//   AIP_MODE=PREDICTION, AIP_MODE_VERSION=1.0.0, AIP_FRAMEWORK=CUSTOM_CONTAINER
//   AIP_DEPLOYED_MODEL_ID, AIP_ENDPOINT_ID, AIP_MACHINE_TYPE, AIP_ACCELERATOR_TYPE (unset without
//   accelerators), AIP_PROJECT_NUMBER; AIP_MODEL_NAME = the endpoint id and AIP_VERSION_NAME =
//   the deployed model id (Vertex keeps both for compatibility, with these values)
//
// A serving replica answers GET <health route> with 200 once it can predict (anything else while
// it loads), and POST <predict route> {"instances": [...], "parameters": {...}} with
// {"predictions": [...]}, one prediction per instance, in order.
//
// No LibTorch: the executors and the server link it as well as the runtimes.
#pragma once

#include <map>
#include <string>

#include "common/status.h"

namespace trainyard::serving_contract {

using EnvMap = std::map<std::string, std::string>;

inline constexpr char kAipHttpPort[] = "AIP_HTTP_PORT";
inline constexpr char kAipPredictRoute[] = "AIP_PREDICT_ROUTE";
inline constexpr char kAipHealthRoute[] = "AIP_HEALTH_ROUTE";
inline constexpr char kAipStorageUri[] = "AIP_STORAGE_URI";
inline constexpr char kAipMode[] = "AIP_MODE";
inline constexpr char kAipModeVersion[] = "AIP_MODE_VERSION";
inline constexpr char kAipFramework[] = "AIP_FRAMEWORK";
inline constexpr char kAipDeployedModelId[] = "AIP_DEPLOYED_MODEL_ID";
inline constexpr char kAipEndpointId[] = "AIP_ENDPOINT_ID";
inline constexpr char kAipMachineType[] = "AIP_MACHINE_TYPE";
inline constexpr char kAipAcceleratorType[] = "AIP_ACCELERATOR_TYPE";
inline constexpr char kAipProjectNumber[] = "AIP_PROJECT_NUMBER";
inline constexpr char kAipModelName[] = "AIP_MODEL_NAME";
inline constexpr char kAipVersionName[] = "AIP_VERSION_NAME";

inline constexpr int kDefaultHttpPort = 8080;
inline constexpr char kPredictionMode[] = "PREDICTION";
inline constexpr char kModeVersion[] = "1.0.0";
inline constexpr char kCustomContainerFramework[] = "CUSTOM_CONTAINER";
// Vertex refuses larger prediction requests on shared endpoints; replicas may rely on it.
inline constexpr size_t kMaxPredictRequestBytes = 1536 * 1024;

// "/v1/endpoints/E/deployedModels/D:predict" and "/v1/endpoints/E/deployedModels/D".
std::string DefaultPredictRoute(const std::string& endpoint_id, const std::string& deployed_id);
std::string DefaultHealthRoute(const std::string& endpoint_id, const std::string& deployed_id);

// What one serving replica is told.
struct ServingEnv {
  int http_port = kDefaultHttpPort;
  std::string predict_route;  // "" = the default route
  std::string health_route;   // "" = the default route
  std::string storage_uri;
  std::string endpoint_id;
  std::string deployed_model_id;
  std::string machine_type;
  std::string accelerator_type;  // "" = none (the variable is then unset)
  std::string project_number;
};

// Every variable above, defaults resolved (routes filled in from the ids).
EnvMap EncodeServingEnv(const ServingEnv& env);

// The settings a runtime reads from its environment (`get` returns "" for an unset variable).
// Unset variables take their defaults; INVALID_ARGUMENT naming the variable for an AIP_HTTP_PORT
// that is not 1-65535 or a route that does not start with '/'.
StatusOr<ServingEnv> DecodeServingEnv(const EnvMap& env);

}  // namespace trainyard::serving_contract
