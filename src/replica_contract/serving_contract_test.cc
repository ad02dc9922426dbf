#include "replica_contract/serving_contract.h"

#include <gtest/gtest.h>

namespace trainyard::serving_contract {
namespace {

std::string Render(const EnvMap& env) {
  std::string out;
  for (const auto& [k, v] : env) out += k + "=" + v + "\n";
  return out;
}

TEST(ServingContractTest, EncodesVertexDefaults) {
  ServingEnv env;
  env.storage_uri = "gs://b/model/";
  env.endpoint_id = "12";
  env.deployed_model_id = "34";
  env.machine_type = "n1-standard-4";
  env.project_number = "5";
  EXPECT_EQ(Render(EncodeServingEnv(env)),
            "AIP_DEPLOYED_MODEL_ID=34\n"
            "AIP_ENDPOINT_ID=12\n"
            "AIP_FRAMEWORK=CUSTOM_CONTAINER\n"
            "AIP_HEALTH_ROUTE=/v1/endpoints/12/deployedModels/34\n"
            "AIP_HTTP_PORT=8080\n"
            "AIP_MACHINE_TYPE=n1-standard-4\n"
            "AIP_MODE=PREDICTION\n"
            "AIP_MODEL_NAME=12\n"
            "AIP_MODE_VERSION=1.0.0\n"
            "AIP_PREDICT_ROUTE=/v1/endpoints/12/deployedModels/34:predict\n"
            "AIP_PROJECT_NUMBER=5\n"
            "AIP_STORAGE_URI=gs://b/model/\n"
            "AIP_VERSION_NAME=34\n");
}

TEST(ServingContractTest, RoundTripsCustomRoutesPortAndAccelerator) {
  ServingEnv env;
  env.http_port = 7080;
  env.predict_route = "/predict";
  env.health_route = "/ping";
  env.endpoint_id = "1";
  env.deployed_model_id = "2";
  env.accelerator_type = "NVIDIA_TESLA_T4";
  auto back = DecodeServingEnv(EncodeServingEnv(env));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(std::to_string(back->http_port) + " " + back->predict_route + " " + back->health_route +
                " " + back->accelerator_type,
            "7080 /predict /ping NVIDIA_TESLA_T4");
}

TEST(ServingContractTest, DecodeFillsDefaultsFromIds) {
  auto env = DecodeServingEnv({{kAipEndpointId, "9"}, {kAipDeployedModelId, "8"}});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(std::to_string(env->http_port) + " " + env->predict_route + " " + env->health_route,
            "8080 /v1/endpoints/9/deployedModels/8:predict /v1/endpoints/9/deployedModels/8");
}

TEST(ServingContractTest, DecodeRefusesBadPortAndRouteNamingTheVariable) {
  std::string errors;
  for (const EnvMap& env : std::vector<EnvMap>{{{kAipHttpPort, "0"}},
                                               {{kAipHttpPort, "80x"}},
                                               {{kAipHttpPort, "65536"}},
                                               {{kAipPredictRoute, "predict"}},
                                               {{kAipHealthRoute, "health"}}}) {
    errors += DecodeServingEnv(env).status().ToString() + "\n";
  }
  EXPECT_EQ(errors,
            "INVALID_ARGUMENT: AIP_HTTP_PORT='0' is not a port; use a number from 1 to 65535\n"
            "INVALID_ARGUMENT: AIP_HTTP_PORT='80x' is not a port; use a number from 1 to 65535\n"
            "INVALID_ARGUMENT: AIP_HTTP_PORT='65536' is not a port; use a number from 1 to 65535\n"
            "INVALID_ARGUMENT: AIP_PREDICT_ROUTE='predict' is not an HTTP path; it must start "
            "with '/'\n"
            "INVALID_ARGUMENT: AIP_HEALTH_ROUTE='health' is not an HTTP path; it must start "
            "with '/'\n");
}

}  // namespace
}  // namespace trainyard::serving_contract
