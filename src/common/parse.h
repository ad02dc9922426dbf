// Strict number parsing for user input (flags, query parameters, JSON strings): the whole text
// must be the number, so "12abc", "", " 3" and out-of-range values are rejected instead of being
// read as a prefix or clamped, as std::stoll/strtol would.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace trainyard {

// A base-10 int64 ("-42", "7"), or nullopt.
std::optional<int64_t> ParseInt64(std::string_view text);

}  // namespace trainyard
