#include "spec/time_util.h"

#include <cstdio>
#include <ctime>

namespace trainyard::spec {
namespace {

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

}  // namespace

int64_t ToUnixMicros(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

std::chrono::system_clock::time_point FromUnixMicros(int64_t us) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::microseconds(us)));
}

std::string FormatTimestamp(std::chrono::system_clock::time_point t) {
  int64_t us = ToUnixMicros(t);
  int64_t secs = us >= 0 ? us / 1000000 : (us - 999999) / 1000000;
  int64_t frac = us - secs * 1000000;
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

StatusOr<std::chrono::system_clock::time_point> ParseTimestamp(std::string_view s) {
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
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return bad();
  }
  size_t pos = 19;
  int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) micros = micros * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return bad();
    for (int d = digits; d < 6; ++d) micros *= 10;
  }
  int offset_minutes = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!ParseDigits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !ParseDigits(s, pos + 4, 2, &om)) {
      return bad();
    }
    offset_minutes = (oh * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != s.size()) return bad();
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  int64_t secs = static_cast<int64_t>(::timegm(&tm)) - offset_minutes * 60;
  return FromUnixMicros(secs * 1000000 + micros);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  std::string sign = ms < 0 ? "-" : "";
  if (ms < 0) ms = -ms;
  std::string out = sign + std::to_string(ms / 1000);
  if (int64_t frac = ms % 1000; frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "s";
}

StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view s) {
  auto bad = [&] {
    return InvalidArgumentError("'" + std::string(s) +
                                "' is not a duration; expected seconds with an 's' suffix, "
                                "e.g. \"3600s\" or \"1.5s\"");
  };
  if (s.size() < 2 || s.back() != 's') return bad();
  std::string_view body = s.substr(0, s.size() - 1);
  bool negative = false;
  if (!body.empty() && body[0] == '-') {
    negative = true;
    body.remove_prefix(1);
  }
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
  int64_t ms = 0;
  for (size_t i = 0; i < frac.size(); ++i) {
    if (frac[i] < '0' || frac[i] > '9') return bad();
    if (i < 3) ms = ms * 10 + (frac[i] - '0');
  }
  for (size_t i = frac.size(); i < 3; ++i) ms *= 10;
  int64_t total = secs * 1000 + ms;
  return std::chrono::milliseconds(negative ? -total : total);
}

}  // namespace trainyard::spec
