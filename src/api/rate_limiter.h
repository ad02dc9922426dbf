// RateLimiter: a token bucket per key (the caller's token id), for `trainyard server
// --create-rate 10/s --create-burst 20` (docs/security.md). Each key starts with `burst` tokens;
// one is taken per request and they refill at `per_second`, up to `burst`.
//
// The RouteTable asks it for every create (a POST to a collection under /v1/projects/, not a
// custom method such as :cancel) once the caller is authenticated; a refused create is 429
// RESOURCE_EXHAUSTED with a Retry-After header. Callers without a token (a server without
// --auth) share the key "-".
//
// Pure logic over an injected clock; thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"

namespace trainyard::api {

struct Rate {
  double per_second = 0;
  double burst = 0;  // tokens a key may hold; at least 1
};

// "10/s", "600/m", "1000/h" (a positive number per second, minute or hour); the burst is the
// number itself unless given. INVALID_ARGUMENT naming `flag` otherwise.
StatusOr<Rate> ParseRate(const std::string& text, const std::string& flag = "--create-rate");

class RateLimiter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  explicit RateLimiter(Rate rate, Clock clock = nullptr);

  // Takes a token of `key`: nullopt when there was one; otherwise how long until there is
  // (rounded up to whole seconds, at least 1: what Retry-After says).
  std::optional<std::chrono::seconds> Take(const std::string& key);
  const Rate& rate() const { return rate_; }

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point updated;
  };
  const Rate rate_;
  const Clock clock_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

// The 429 for a refused create: "token T may create at most 10 per second (burst 20); retry in
// 1s". One wording for every route.
Status RateLimitedError(const std::string& token_id, const Rate& rate,
                        std::chrono::seconds retry_after);

}  // namespace trainyard::api
