#include "replica_contract/serving_contract.h"

#include <charconv>

namespace trainyard::serving_contract {
namespace {

std::string Get(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

StatusOr<std::string> Route(const EnvMap& env, const char* name) {
  std::string route = Get(env, name);
  if (!route.empty() && route.front() != '/') {
    return InvalidArgumentError(std::string(name) + "='" + route +
                                "' is not an HTTP path; it must start with '/'");
  }
  return route;
}

}  // namespace

std::string DefaultPredictRoute(const std::string& endpoint_id, const std::string& deployed_id) {
  return DefaultHealthRoute(endpoint_id, deployed_id) + ":predict";
}

std::string DefaultHealthRoute(const std::string& endpoint_id, const std::string& deployed_id) {
  return "/v1/endpoints/" + endpoint_id + "/deployedModels/" + deployed_id;
}

EnvMap EncodeServingEnv(const ServingEnv& env) {
  EnvMap out;
  out[kAipHttpPort] = std::to_string(env.http_port);
  out[kAipPredictRoute] = env.predict_route.empty()
                              ? DefaultPredictRoute(env.endpoint_id, env.deployed_model_id)
                              : env.predict_route;
  out[kAipHealthRoute] = env.health_route.empty()
                             ? DefaultHealthRoute(env.endpoint_id, env.deployed_model_id)
                             : env.health_route;
  out[kAipStorageUri] = env.storage_uri;
  out[kAipMode] = kPredictionMode;
  out[kAipModeVersion] = kModeVersion;
  out[kAipFramework] = kCustomContainerFramework;
  out[kAipDeployedModelId] = env.deployed_model_id;
  out[kAipEndpointId] = env.endpoint_id;
  out[kAipMachineType] = env.machine_type;
  if (!env.accelerator_type.empty()) out[kAipAcceleratorType] = env.accelerator_type;
  out[kAipProjectNumber] = env.project_number;
  out[kAipModelName] = env.endpoint_id;
  out[kAipVersionName] = env.deployed_model_id;
  return out;
}

StatusOr<ServingEnv> DecodeServingEnv(const EnvMap& env) {
  ServingEnv out;
  std::string port = Get(env, kAipHttpPort);
  if (!port.empty()) {
    int value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535) {
      return InvalidArgumentError(std::string(kAipHttpPort) + "='" + port +
                                  "' is not a port; use a number from 1 to 65535");
    }
    out.http_port = value;
  }
  TY_ASSIGN_OR_RETURN(out.predict_route, Route(env, kAipPredictRoute));
  TY_ASSIGN_OR_RETURN(out.health_route, Route(env, kAipHealthRoute));
  out.storage_uri = Get(env, kAipStorageUri);
  out.endpoint_id = Get(env, kAipEndpointId);
  out.deployed_model_id = Get(env, kAipDeployedModelId);
  out.machine_type = Get(env, kAipMachineType);
  out.accelerator_type = Get(env, kAipAcceleratorType);
  out.project_number = Get(env, kAipProjectNumber);
  if (out.predict_route.empty()) {
    out.predict_route = DefaultPredictRoute(out.endpoint_id, out.deployed_model_id);
  }
  if (out.health_route.empty()) {
    out.health_route = DefaultHealthRoute(out.endpoint_id, out.deployed_model_id);
  }
  return out;
}

}  // namespace trainyard::serving_contract
