// Wire formats of google.protobuf.Timestamp and google.protobuf.Duration in proto3 JSON.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::spec {

// RFC 3339 in UTC with microseconds, e.g. "2026-11-22T02:41:52.123456Z".
std::string FormatTimestamp(std::chrono::system_clock::time_point t);
// Accepts RFC 3339 with "Z" or a "+hh:mm"/"-hh:mm" offset and 0..9 fractional digits.
// INVALID_ARGUMENT (message names the bad text) otherwise.
StatusOr<std::chrono::system_clock::time_point> ParseTimestamp(std::string_view text);

// "86400s", "1.500s" (fraction only when non-zero; trailing zeros trimmed).
std::string FormatDuration(std::chrono::milliseconds d);
// "<seconds>[.<fraction>]s", seconds may be negative; sub-millisecond digits are truncated.
StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Microseconds since the Unix epoch (the store's time columns).
int64_t ToUnixMicros(std::chrono::system_clock::time_point t);
std::chrono::system_clock::time_point FromUnixMicros(int64_t us);

}  // namespace trainyard::spec
