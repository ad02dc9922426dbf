// Vertex endpoint bodies (spec/endpoint.h: DeployModelRequest, UndeployModelRequest, Endpoint) on
// arbitrary bytes: a deployed model that decodes must encode to JSON that decodes to the same
// JSON again. The same bytes as a :mutateDeployedModel body (controller/endpoint_internal.h
// ApplyMutation) over that deployed model: a mutation it accepts still decodes; and as an
// endpoint whose trafficSplit draws a deployed model (PickByTraffic): one of the split's ids.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "controller/endpoint_internal.h"
#include "protojson/parse.h"
#include "spec/endpoint.h"

namespace {

using nlohmann::json;
namespace ei = trainyard::controller::endpoint_internal;

void Mutate(const json& deployed_model, const json& body) {
  if (!body.is_object()) return;
  const json given = body.value("deployedModel", json::object());
  const json mask = body.value("updateMask", json(""));
  if (!mask.is_string()) return;
  auto changed = ei::ApplyMutation(deployed_model, given, mask.get<std::string>());
  if (changed.ok() && !trainyard::spec::DecodeDeployedModel(*changed, "deployedModel").ok()) {
    std::abort();
  }
}

void Draw(const json& endpoint) {
  if (!endpoint.is_object()) return;
  const trainyard::spec::TrafficSplit split = ei::SplitOf(endpoint);
  const std::string id = ei::PickByTraffic(split);
  if (!id.empty() && !split.contains(id)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainyard::spec;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)ParseUndeployModelRequest(body);
  auto parsed = trainyard::protojson::ParseJson(body);
  if (parsed.ok()) {
    (void)DecodeEndpoint(*parsed);
    Draw(*parsed);
  }
  auto request = ParseDeployModelRequest(body);
  if (!request.ok()) return 0;
  const json once = DeployedModelJson(request->deployed_model);
  auto again = DecodeDeployedModel(once, "deployedModel");
  if (!again.ok() || DeployedModelJson(*again) != once) std::abort();
  if (parsed.ok()) Mutate(once, *parsed);
  return 0;
}
