#include <gtest/gtest.h>

#include "spec/endpoint.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;

std::string Render(const TrafficSplit& split) {
  std::string out;
  for (const auto& [id, p] : split) out += id + "=" + std::to_string(p) + " ";
  return out;
}
std::string Render(const StatusOr<TrafficSplit>& split) {
  return split.ok() ? Render(*split) : split.status().ToString();
}

TEST(EndpointJsonTest, DecodesAnEndpointAndDropsOutputOnlyFields) {
  auto e = DecodeEndpoint(json::parse(
      R"({"displayName": "ep", "description": "d", "labels": {"team": "a"},
          "name": "projects/p/locations/l/endpoints/1", "deployedModels": [], "etag": "x"})"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->dump(), R"({"description":"d","displayName":"ep","labels":{"team":"a"}})");
}

TEST(EndpointJsonTest, RefusesBadEndpointsNamingTheField) {
  std::string errors;
  for (const char* body : {R"({})", R"({"displayName": ""})", R"({"displayName": "e", "x": 1})",
                           R"({"displayName": "e", "network": "n"})",
                           R"({"displayName": "e", "trafficSplit": {"1": "a"}})"}) {
    errors += DecodeEndpoint(json::parse(body)).status().ToString() + "\n";
  }
  EXPECT_EQ(errors,
            "INVALID_ARGUMENT: displayName: required; the endpoint's name in lists\n"
            "INVALID_ARGUMENT: displayName: required: the endpoint's name in lists\n"
            "INVALID_ARGUMENT: Invalid JSON payload received. Unknown name \"x\" at 'endpoint': "
            "Cannot find field.\n"
            "INVALID_ARGUMENT: network: not supported by Trainyard; remove it (endpoints are "
            "served by the server)\n"
            "INVALID_ARGUMENT: Invalid value at 'trafficSplit[\"1\"]' (TYPE_INT32), \"a\"\n");
}

TEST(EndpointJsonTest, ParsesWhatGcloudSendsToDeploy) {
  // gcloud ai endpoints deploy-model (docs/reference/endpoints-real-clients.md).
  auto r = ParseDeployModelRequest(
      R"({"deployedModel": {"dedicatedResources": {"machineSpec": {"machineType": "n1-standard-4"},
          "maxReplicaCount": 2, "minReplicaCount": 1, "spot": false},
          "disableContainerLogging": false, "displayName": "dm", "enableAccessLogging": false,
          "model": "projects/p1/locations/us-central1/models/789"}, "trafficSplit": {"0": 100}})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(DeployedModelJson(r->deployed_model).dump() + " " + Render(r->traffic_split),
            R"({"dedicatedResources":{"machineSpec":{"machineType":"n1-standard-4"},)"
            R"("maxReplicaCount":2,"minReplicaCount":1},"displayName":"dm",)"
            R"("model":"projects/p1/locations/us-central1/models/789"} 0=100 )");
}

TEST(EndpointJsonTest, DefaultsAndRoundTripsAutomaticResources) {
  auto r = ParseDeployModelRequest(
      R"({"deployedModel": {"model": "7@2", "automaticResources": {"minReplicaCount": 2}}})");
  ASSERT_TRUE(r.ok()) << r.status();
  auto back = DecodeDeployedModel(DeployedModelJson(r->deployed_model), "deployedModel");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(DeployedModelJson(*back).dump(),
            R"({"automaticResources":{"maxReplicaCount":2,"minReplicaCount":2},"model":"7@2"})");
}

TEST(EndpointJsonTest, RefusesBadDeployRequests) {
  std::string errors;
  for (const char* body : {
           R"({})",
           R"({"deployedModel": {}})",
           R"({"deployedModel": {"model": "m", "id": "12a"}})",
           R"({"deployedModel": {"model": "m", "dedicatedResources": {"minReplicaCount": 0}}})",
           R"({"deployedModel": {"model": "m", "dedicatedResources": {"minReplicaCount": 3,
               "maxReplicaCount": 2}}})",
           R"({"deployedModel": {"model": "m", "dedicatedResources": {},
               "automaticResources": {}}})",
           R"({"deployedModel": {"model": "m", "dedicatedResources": {"autoscalingMetricSpecs":
               [{"metricName": "qps", "target": 5}]}}})",
       }) {
    errors += ParseDeployModelRequest(body).status().ToString() + "\n";
  }
  EXPECT_EQ(
      errors,
      "INVALID_ARGUMENT: deployedModel: required; {\"deployedModel\": {\"model\": \"...\"}}\n"
      "INVALID_ARGUMENT: deployedModel.model: required; the model to deploy: "
      "projects/P/locations/L/models/M\n"
      "INVALID_ARGUMENT: deployedModel.id: '12a' is not 1 to 10 digits (or leave it out)\n"
      "INVALID_ARGUMENT: deployedModel.dedicatedResources.minReplicaCount: must be 1 to 64, got 0\n"
      "INVALID_ARGUMENT: deployedModel.dedicatedResources.maxReplicaCount: must be "
      "minReplicaCount (3) to 64, got 2\n"
      "INVALID_ARGUMENT: deployedModel.automaticResources: give dedicatedResources or "
      "automaticResources, not both\n"
      "INVALID_ARGUMENT: deployedModel.dedicatedResources.autoscalingMetricSpecs[0].metricName: "
      "'qps' is not a metric Trainyard scales on; use "
      "aiplatform.googleapis.com/prediction/online/cpu/utilization or "
      "aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle\n");
}

TEST(EndpointJsonTest, TrafficSplitRules) {
  const std::set<std::string> one = {"1"};
  std::string out;
  out += Render(TrafficAfterDeploy({}, {}, {}, "1")) + "| ";             // first model: all
  out += Render(TrafficAfterDeploy({{"1", 100}}, {}, one, "2")) + "| ";  // kept
  out += Render(TrafficAfterDeploy({{"1", 100}}, {{"0", 30}, {"1", 70}}, one, "2")) + "| ";
  out += Render(TrafficAfterDeploy({{"1", 100}}, {{"0", 30}}, one, "2")) + "| ";
  out += Render(TrafficAfterDeploy({}, {{"9", 100}}, one, "2")) + "| ";
  EXPECT_EQ(out,
            "1=100 | 1=100 | 1=70 2=30 | INVALID_ARGUMENT: trafficSplit: the percentages add up "
            "to 30; they must add up to 100| INVALID_ARGUMENT: trafficSplit: '9' is not a model "
            "deployed on this endpoint (deployed: 1, 2)| ");
}

TEST(EndpointJsonTest, UndeployNeedsTheModelToHaveNoTraffic) {
  const std::set<std::string> two = {"1", "2"};
  std::string out;
  out += Render(TrafficAfterUndeploy({{"1", 100}}, {}, {"1"}, "1")) + "| ";  // last: empty
  out += Render(TrafficAfterUndeploy({{"1", 100}, {"2", 0}}, {}, two, "2")) + "| ";
  out += Render(TrafficAfterUndeploy({{"1", 100}}, {{"2", 100}}, two, "1")) + "| ";
  out += Render(TrafficAfterUndeploy({{"1", 100}}, {}, two, "1")) + "| ";
  EXPECT_EQ(out,
            "| 1=100 | 2=100 | FAILED_PRECONDITION: deployed model 1 has 100% of the endpoint's "
            "traffic; send a trafficSplit that moves it to the models that stay| ");
}

}  // namespace
}  // namespace trainyard::spec
