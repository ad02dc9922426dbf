#include "protojson/parse.h"

namespace trainyard::protojson {
namespace {

struct TooDeep {};

}  // namespace

StatusOr<nlohmann::json> ParseJson(std::string_view text) {
  // The callback sees every value with its depth; throwing stops the parser before it builds the
  // deep part.
  auto limit_depth = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth >= kMaxDepth) throw TooDeep{};  // `depth` counts the enclosing containers
    return true;
  };
  try {
    return nlohmann::json::parse(text, limit_depth);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("Invalid JSON payload received. ") + e.what());
  } catch (const TooDeep&) {
    return InvalidArgumentError("Invalid JSON payload received. Nesting is deeper than " +
                                std::to_string(kMaxDepth) + " levels.");
  }
}

}  // namespace trainyard::protojson
