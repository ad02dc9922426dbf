#include "api/rate_limiter.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "api/route_table.h"

namespace trainyard::api {
namespace {

TEST(RateLimiterTest, ABurstThenOneTokenPerIntervalPerKey) {
  auto now = std::chrono::steady_clock::time_point(std::chrono::seconds(100));
  RateLimiter limiter(*ParseRate("1/s"), [&now] { return now; });
  std::string seen;
  auto take = [&](const std::string& key) {
    auto wait = limiter.Take(key);
    seen += wait ? "wait" + std::to_string(wait->count()) + " " : "ok ";
  };
  take("a");
  take("a");
  take("b");  // another token has its own bucket
  now += std::chrono::seconds(1);
  take("a");
  EXPECT_EQ(seen, "ok wait1 ok ok ");
}

TEST(RateLimiterTest, RatesParseAndBadOnesNameTheFlag) {
  auto per_minute = ParseRate("600/m");
  ASSERT_TRUE(per_minute.ok());
  EXPECT_EQ(std::to_string(per_minute->per_second) + " " + std::to_string(per_minute->burst) +
                " | " + ParseRate("ten/s").status().ToString(),
            "10.000000 600.000000 | INVALID_ARGUMENT: --create-rate: expected a positive number "
            "per s, m or h, e.g. 10/s or 600/m; got 'ten/s'");
}

// Through the RouteTable: a create over the rate is 429 with Retry-After; a custom method
// (:cancel) and reads are not counted.
TEST(RateLimiterTest, TheRouteTableRefusesCreatesOverTheRateWith429AndRetryAfter) {
  RateLimiter limiter(Rate{1.0 / 60, 1});
  httplib::Server server;
  AuthOptions options;
  options.create_limiter = &limiter;
  RouteTable routes(server, options);
  auto ok = [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  };
  routes.Post("/v1/projects/([^/]+)/things", auth::Access::kWrite, ok);
  routes.Post("/v1/projects/([^/]+)/things/([^/:]+):cancel", auth::Access::kWrite, ok);
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  httplib::Client c("127.0.0.1", port);
  std::string seen;
  for (const char* path :
       {"/v1/projects/p/things", "/v1/projects/p/things", "/v1/projects/p/things/1:cancel"}) {
    auto r = c.Post(path, "{}", "application/json");
    seen += std::to_string(r ? r->status : -1) + ":" +
            (r ? r->get_header_value("Retry-After") : "") + " ";
  }
  server.stop();
  serving.join();
  EXPECT_EQ(seen, "200: 429:60 200: ");
}

}  // namespace
}  // namespace trainyard::api
