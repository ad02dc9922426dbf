// Vertex endpoint bodies (spec/endpoint.h: DeployModelRequest, UndeployModelRequest, Endpoint) on
// arbitrary bytes: a deployed model that decodes must encode to JSON that decodes to the same
// JSON again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "protojson/parse.h"
#include "spec/endpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainyard::spec;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)ParseUndeployModelRequest(body);
  if (auto j = trainyard::protojson::ParseJson(body); j.ok()) (void)DecodeEndpoint(*j);
  auto request = ParseDeployModelRequest(body);
  if (!request.ok()) return 0;
  const nlohmann::json once = DeployedModelJson(request->deployed_model);
  auto again = DecodeDeployedModel(once, "deployedModel");
  if (!again.ok() || DeployedModelJson(*again) != once) std::abort();
  return 0;
}
