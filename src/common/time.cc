#include "common/time.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace trainyard {
namespace {

constexpr int64_t kMicrosPerSecond = 1000000;
// proto3's Duration range: +-10,000 years.
constexpr int64_t kMaxDurationSeconds = 315576000000;
// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, proto3's Timestamp range.
constexpr int64_t kMinTimestampSeconds = -62135596800;
constexpr int64_t kMaxTimestampSeconds = 253402300799;

bool ParseDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// Reads ".f{1,9}" at `*pos` (if present) as microseconds; false on a '.' without digits or with
// more than nine.
bool ParseFraction(std::string_view s, size_t* pos, int64_t* micros) {
  *micros = 0;
  if (*pos >= s.size() || s[*pos] != '.') return true;
  ++*pos;
  int digits = 0;
  while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9') {
    if (digits < 6) *micros = *micros * 10 + (s[*pos] - '0');
    ++digits;
    ++*pos;
  }
  if (digits == 0 || digits > 9) return false;
  for (int d = digits; d < 6; ++d) *micros *= 10;
  return true;
}

// Reads "Z" or "+hh:mm"/"-hh:mm" at `*pos` as an offset east of UTC in minutes.
bool ParseOffset(std::string_view s, size_t* pos, int* offset_minutes) {
  *offset_minutes = 0;
  if (*pos < s.size() && (s[*pos] == 'Z' || s[*pos] == 'z')) {
    ++*pos;
    return true;
  }
  if (*pos >= s.size() || (s[*pos] != '+' && s[*pos] != '-')) return false;
  int oh = 0, om = 0;
  if (!ParseDigits(s, *pos + 1, 2, &oh) || *pos + 3 >= s.size() || s[*pos + 3] != ':' ||
      !ParseDigits(s, *pos + 4, 2, &om) || oh > 23 || om > 59) {
    return false;
  }
  *offset_minutes = (oh * 60 + om) * (s[*pos] == '-' ? -1 : 1);
  *pos += 6;
  return true;
}

}  // namespace

int64_t ToUnixMicros(TimePoint t) {
  return std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch()).count();
}

TimePoint FromUnixMicros(int64_t us) {
  // TimePoint counts nanoseconds in an int64: beyond its range the conversion would overflow.
  constexpr int64_t kMaxMicros =
      std::chrono::duration_cast<std::chrono::microseconds>(TimePoint::duration::max()).count();
  constexpr int64_t kMinMicros =
      std::chrono::duration_cast<std::chrono::microseconds>(TimePoint::duration::min()).count();
  us = std::clamp(us, kMinMicros, kMaxMicros);
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(us)));
}

std::string FormatTimestamp(TimePoint t) {
  int64_t us = ToUnixMicros(t);
  int64_t secs = us >= 0 ? us / kMicrosPerSecond : (us - (kMicrosPerSecond - 1)) / kMicrosPerSecond;
  int64_t frac = us - secs * kMicrosPerSecond;
  if (secs < kMinTimestampSeconds) {
    secs = kMinTimestampSeconds;
    frac = 0;
  } else if (secs > kMaxTimestampSeconds) {
    secs = kMaxTimestampSeconds;
    frac = kMicrosPerSecond - 1;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

StatusOr<TimePoint> ParseTimestamp(std::string_view s) {
  auto bad = [&] {
    return InvalidArgumentError("'" + std::string(s) +
                                "' is not an RFC 3339 time; expected e.g. 2021-05-18T00:00:00Z");
  };
  int year, mon, day, hour, min, sec;
  if (s.size() < 20 || !ParseDigits(s, 0, 4, &year) || s[4] != '-' || !ParseDigits(s, 5, 2, &mon) ||
      s[7] != '-' || !ParseDigits(s, 8, 2, &day) ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !ParseDigits(s, 11, 2, &hour) ||
      s[13] != ':' || !ParseDigits(s, 14, 2, &min) || s[16] != ':' ||
      !ParseDigits(s, 17, 2, &sec)) {
    return bad();
  }
  if (year < 1 || mon < 1 || mon > 12 || day < 1 || day > DaysInMonth(year, mon) || hour > 23 ||
      min > 59 || sec > 60) {
    return bad();
  }
  size_t pos = 19;
  int64_t micros = 0;
  int offset_minutes = 0;
  if (!ParseFraction(s, &pos, &micros) || !ParseOffset(s, &pos, &offset_minutes) ||
      pos != s.size()) {
    return bad();
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  int64_t secs = static_cast<int64_t>(::timegm(&tm)) - offset_minutes * 60;
  return FromUnixMicros(secs * kMicrosPerSecond + micros);
}

std::string FormatDuration(Duration d) {
  int64_t us = d.count();
  std::string out = us < 0 ? "-" : "";
  uint64_t mag = us < 0 ? 0 - static_cast<uint64_t>(us) : static_cast<uint64_t>(us);
  out += std::to_string(mag / kMicrosPerSecond);
  if (uint64_t frac = mag % kMicrosPerSecond; frac != 0) {
    char buf[16];
    std::snprintf(buf, sizeof buf, ".%06llu", static_cast<unsigned long long>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "s";
}

StatusOr<Duration> ParseDuration(std::string_view s) {
  auto bad = [&] {
    return InvalidArgumentError("'" + std::string(s) +
                                "' is not a duration; expected seconds with an 's' suffix, "
                                "e.g. \"3600s\" or \"1.5s\"");
  };
  if (s.size() < 2 || s.back() != 's') return bad();
  std::string_view body = s.substr(0, s.size() - 1);
  bool negative = !body.empty() && body[0] == '-';
  if (negative) body.remove_prefix(1);
  size_t dot = body.find('.');
  std::string_view whole = body.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? "" : body.substr(dot + 1);
  if (whole.empty() || whole.size() > 12) return bad();
  if (dot != std::string_view::npos && (frac.empty() || frac.size() > 9)) return bad();
  int64_t secs = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return bad();
    secs = secs * 10 + (c - '0');
  }
  if (secs > kMaxDurationSeconds) return bad();
  int64_t micros = 0;
  for (size_t i = 0; i < frac.size(); ++i) {
    if (frac[i] < '0' || frac[i] > '9') return bad();
    if (i < 6) micros = micros * 10 + (frac[i] - '0');
  }
  for (size_t i = frac.size(); i < 6; ++i) micros *= 10;
  int64_t total = secs * kMicrosPerSecond + micros;
  return Duration(negative ? -total : total);
}

Duration DurationFromSeconds(double seconds) {
  if (std::isnan(seconds)) return Duration(0);
  const double limit = static_cast<double>(kMaxDurationSeconds);
  seconds = std::fmax(-limit, std::fmin(limit, seconds));
  return Duration(static_cast<int64_t>(std::llround(seconds * kMicrosPerSecond)));
}

double DurationToSeconds(Duration d) {
  return static_cast<double>(d.count()) / static_cast<double>(kMicrosPerSecond);
}

WallClock OrSystemClock(WallClock clock) {
  if (clock) return clock;
  return [] { return std::chrono::system_clock::now(); };
}

}  // namespace trainyard
