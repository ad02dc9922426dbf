#include "protojson/parse.h"

#include "common/json_parse.h"

namespace trainyard::protojson {

StatusOr<nlohmann::json> ParseJson(std::string_view text) {
  // One parser for all JSON (common/json_parse.h); this layer only adds Google's wording.
  auto parsed = trainyard::ParseJson(text, JsonLimits{.max_depth = kMaxDepth});
  if (!parsed.ok()) {
    return InvalidArgumentError("Invalid JSON payload received. " + parsed.status().message());
  }
  return parsed;
}

}  // namespace trainyard::protojson
