#include "api/rate_limiter.h"

#include <cmath>
#include <cstdio>

namespace trainyard::api {

StatusOr<Rate> ParseRate(const std::string& text, const std::string& flag) {
  const size_t slash = text.find('/');
  const std::string number = text.substr(0, slash);
  const std::string unit = slash == std::string::npos ? "" : text.substr(slash + 1);
  double n = 0;
  char rest = 0;
  const bool parsed = std::sscanf(number.c_str(), "%lf%c", &n, &rest) == 1;
  const double per = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (!parsed || !(n > 0) || !std::isfinite(n) || per == 0) {
    return InvalidFieldError(flag,
                             "expected a positive number per s, m or h, e.g. 10/s or "
                             "600/m; got '" +
                                 text + "'");
  }
  return Rate{n / per, std::max(1.0, n)};
}

RateLimiter::RateLimiter(Rate rate, Clock clock)
    : rate_(rate),
      clock_(clock ? std::move(clock) : [] { return std::chrono::steady_clock::now(); }) {}

std::optional<std::chrono::seconds> RateLimiter::Take(const std::string& key) {
  const auto now = clock_();
  const double burst = std::max(1.0, rate_.burst);
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(key, Bucket{burst, now});
  Bucket& b = it->second;
  const double elapsed = std::chrono::duration<double>(now - b.updated).count();
  b.tokens = std::min(burst, b.tokens + std::max(0.0, elapsed) * rate_.per_second);
  b.updated = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return std::nullopt;
  }
  const double wait = (1 - b.tokens) / rate_.per_second;
  return std::chrono::seconds(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(wait))));
}

Status RateLimitedError(const std::string& token_id, const Rate& rate,
                        std::chrono::seconds retry_after) {
  char figures[96];
  std::snprintf(figures, sizeof figures, "%g per second (burst %g)", rate.per_second, rate.burst);
  return Status(StatusCode::kResourceExhausted,
                "token " + token_id + " may create at most " + figures + " (the server's " +
                    "--create-rate); retry in " + std::to_string(retry_after.count()) + "s");
}

}  // namespace trainyard::api
