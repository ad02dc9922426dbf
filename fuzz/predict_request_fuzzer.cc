// Vertex predict request bodies on arbitrary bytes, on both sides of an endpoint:
// - the server's (serving_proxy/predict_envelope.h): a body PredictBodyForModel accepts gives a
//   body it accepts again, unchanged; an HttpBody envelope UnwrapHttpBody reads wraps back to
//   one that reads the same;
// - the replica's (serving::ParseTextInstances, what `trainyard-bert serve` reads): parsed texts
//   must encode back into a request that parses to the same texts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "serving/prediction_codec.h"
#include "serving_proxy/predict_envelope.h"

namespace {

void ServerSide(std::string_view body) {
  namespace sp = trainyard::serving_proxy;
  if (auto forwarded = sp::PredictBodyForModel(body); forwarded.ok()) {
    auto again = sp::PredictBodyForModel(*forwarded);
    if (!again.ok() || *again != *forwarded) std::abort();
  }
  if (auto wrapped = sp::UnwrapHttpBody(body)) {
    auto again = sp::UnwrapHttpBody("{\"httpBody\": " + sp::WrapHttpBody(*wrapped) + "}");
    if (!again || again->data != wrapped->data || again->content_type != wrapped->content_type) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using trainyard::serving::ParseTextInstances;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  ServerSide(body);
  auto texts = ParseTextInstances(body);
  if (!texts.ok()) return 0;
  nlohmann::json request = {{"instances", *texts}};
  auto again = ParseTextInstances(request.dump());
  if (!again.ok() || *again != *texts) std::abort();
  return 0;
}
