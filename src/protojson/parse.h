// JSON text -> nlohmann::json for every decoder (API bodies, stored jobs, config files): the one
// place where JSON text is parsed, so input limits are applied (and changed) in one function.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace trainyard::protojson {

// Deepest nesting of objects and arrays a document may have; protobuf's JSON parser uses the same
// default recursion limit. Deeper input is refused before it reaches recursive code (dump(),
// recursive messages such as conditionalParameterSpecs).
inline constexpr int kMaxDepth = 100;

// Parses `text` (RFC 8259, UTF-8). INVALID_ARGUMENT "Invalid JSON payload received. <parser's
// message with the byte position>" on malformed input, or naming the limit when nesting exceeds
// kMaxDepth. Never throws.
StatusOr<nlohmann::json> ParseJson(std::string_view text);

}  // namespace trainyard::protojson
