// Time on the wire and on disk, in one place: RFC 3339 timestamps (google.protobuf.Timestamp in
// proto3 JSON, log lines), "<seconds>s" durations (google.protobuf.Duration) and microseconds
// since the Unix epoch (the store's time columns). Every module that formats, parses or converts
// a time uses these functions, so a timestamp written by one is read back by every other.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard {

using TimePoint = std::chrono::system_clock::time_point;

// The clock that controllers, stores and metrics read, so tests can set the time; empty means
// the system clock (OrSystemClock). Executors step gangs with executor::Clock (process_ops.h), a
// virtual interface that their conformance suite advances.
using WallClock = std::function<TimePoint()>;
// `clock` itself, or the system clock when it is empty.
WallClock OrSystemClock(WallClock clock);

// Microseconds since the Unix epoch; sub-microsecond ticks are dropped (rounded toward the past).
int64_t ToUnixMicros(TimePoint t);
// TimePoint holds nanoseconds in an int64, so it covers 1677-09-21 .. 2262-04-11; times outside
// (proto3 allows 0001 .. 9999) saturate to those ends.
TimePoint FromUnixMicros(int64_t us);

// RFC 3339 in UTC with exactly six fractional digits, e.g. "2026-11-22T02:41:52.123456Z" (fixed
// width so that text order is time order). Times before year 1 or after 9999 are clamped to
// the range proto3 allows (0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999Z).
std::string FormatTimestamp(TimePoint t);

// RFC 3339: "YYYY-MM-DDThh:mm:ss[.f{1,9}](Z|+hh:mm|-hh:mm)"; 't'/'z' and a space for 'T' are
// accepted too. Digits past microseconds are truncated. Years 0001..9999 (proto3's range); the
// day must exist in its month. INVALID_ARGUMENT naming the text and an example otherwise.
StatusOr<TimePoint> ParseTimestamp(std::string_view text);

// A google.protobuf.Duration with microsecond resolution: int64 microseconds cover proto3's
// whole range of +-315,576,000,000 seconds.
using Duration = std::chrono::microseconds;

// "86400s", "1.5s", "-0.25s": seconds with the fraction only when non-zero, trailing zeros
// trimmed.
std::string FormatDuration(Duration d);

// "-?<digits>[.<1..9 digits>]s" within +-315,576,000,000 seconds; digits past microseconds are
// truncated. INVALID_ARGUMENT naming the text and the expected form otherwise.
StatusOr<Duration> ParseDuration(std::string_view text);

// Seconds as a double (Measurement.elapsedDuration) <-> Duration, rounded to the microsecond;
// NaN becomes 0 and values beyond the range are clamped to it.
Duration DurationFromSeconds(double seconds);
double DurationToSeconds(Duration d);

}  // namespace trainyard
