#include "serving_proxy/replica_router.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <thread>

namespace trainyard::serving_proxy {
namespace {

// A serving replica: answers its health route with `health` and echoes predictions with its name.
class FakeReplica {
 public:
  explicit FakeReplica(std::string name) : name_(std::move(name)) {
    server_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      res.status = health_.load();
    });
    server_.Post("/predict", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      res.set_content("{\"by\": \"" + name_ + "\", \"got\": " + req.body + "}", "application/json");
      if (req.has_header("X-Test")) res.status = std::stoi(req.get_header_value("X-Test"));
    });
    server_.set_keep_alive_timeout(1);  // idle connections close soon (KeptConnectionClosed...)
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeReplica() { Stop(); }
  void Stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  ReplicaTarget Target() const { return {name_, "127.0.0.1", port_, "/predict", "/health"}; }
  void set_health(int status) { health_ = status; }
  int requests() const { return requests_; }

 private:
  std::string name_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> health_{200};
  std::atomic<int> requests_{0};
};

ReplicaRouterOptions FastOptions() {
  ReplicaRouterOptions o;
  o.probe_timeout = std::chrono::milliseconds(500);
  o.request_timeout = std::chrono::milliseconds(2000);
  return o;
}

TEST(ReplicaRouterTest, NoTrafficBeforeTheFirstHealthyProbe) {
  FakeReplica a("a");
  ReplicaRouter router(FastOptions());
  router.SetReplicas("ep/1", {a.Target()});
  StatusOr<ForwardReply> r = router.Forward("ep/1", {"{}"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("none of its 1 replicas is healthy"), std::string::npos)
      << r.status();
  router.ProbeOnce();
  r = router.Forward("ep/1", {"[1]"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"by\": \"a\", \"got\": [1]}");
  EXPECT_EQ(r->replica, "a");
  EXPECT_EQ(router.Health("ep/1").healthy, 1);
  EXPECT_EQ(router.Health("ep/1").forwarded, 1u);  // the refused one is not counted
  EXPECT_EQ(router.Health("ep/1").failed, 0u);
  EXPECT_GT(router.Health("ep/1").seconds, 0);
  EXPECT_EQ(router.AllHealth().size(), 1u);
}

TEST(ReplicaRouterTest, AKeptConnectionTheReplicaClosedIsReplacedNotAnError) {
  FakeReplica a("a");
  ReplicaRouter router(FastOptions());
  router.SetReplicas("g", {a.Target()});
  router.ProbeOnce();
  ASSERT_TRUE(router.Forward("g", {"1"}).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the replica's keep-alive
  StatusOr<ForwardReply> r = router.Forward("g", {"2"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(router.Health("g").healthy, 1);
}

TEST(ReplicaRouterTest, UnknownGroupIsUnavailableNamingIt) {
  ReplicaRouter router(FastOptions());
  StatusOr<ForwardReply> r = router.Forward("ep/9", {"{}"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            "UNAVAILABLE: deployed model ep/9 cannot take requests: it has no replicas running; "
            "retry in a few seconds");
}

TEST(ReplicaRouterTest, ReplicaErrorsAndHeadersPassThrough) {
  FakeReplica a("a");
  ReplicaRouter router(FastOptions());
  router.SetReplicas("g", {a.Target()});
  router.ProbeOnce();
  ForwardRequest req{"\"x\"", "text/plain", {{"X-Test", "418"}}};
  StatusOr<ForwardReply> r = router.Forward("g", req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 418);
  EXPECT_EQ(r->content_type, "application/json");
}

TEST(ReplicaRouterTest, UnhealthyAfterFailedProbesInARowAndBackAfterA200) {
  FakeReplica a("a");
  ReplicaRouter router(FastOptions());  // unhealthy_after 2
  router.SetReplicas("g", {a.Target()});
  router.ProbeOnce();
  a.set_health(503);
  router.ProbeOnce();
  EXPECT_EQ(router.Health("g").healthy, 1);
  router.ProbeOnce();
  EXPECT_EQ(router.Health("g").healthy, 0);
  EXPECT_NE(router.Health("g").last_error.find("answered HTTP 503"), std::string::npos);
  a.set_health(200);
  router.ProbeOnce();
  EXPECT_EQ(router.Health("g").healthy, 1);
}

TEST(ReplicaRouterTest, ADeadReplicaIsLeftOutAtOnceAndTheOtherTakesTheTraffic) {
  auto a = std::make_unique<FakeReplica>("a");
  FakeReplica b("b");
  ReplicaRouter router(FastOptions());
  router.SetReplicas("g", {a->Target(), b.Target()});
  router.ProbeOnce();
  ASSERT_EQ(router.Health("g").healthy, 2);
  a->Stop();
  a.reset();
  // The first request that lands on the dead one fails retryably; after it, b serves all.
  int unavailable = 0;
  for (int i = 0; i < 10; ++i) {
    StatusOr<ForwardReply> r = router.Forward("g", {"1"});
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
      ++unavailable;
      continue;
    }
    EXPECT_EQ(r->replica, "b");
  }
  EXPECT_LE(unavailable, 1);
  EXPECT_EQ(router.Health("g").healthy, 1);
  EXPECT_EQ(router.Health("g").failed, static_cast<uint64_t>(unavailable));
}

TEST(ReplicaRouterTest, KeptReplicasKeepTheirHealthNewOnesStartUnhealthy) {
  FakeReplica a("a");
  FakeReplica b("b");
  ReplicaRouter router(FastOptions());
  router.SetReplicas("g", {a.Target()});
  router.ProbeOnce();
  router.SetReplicas("g", {a.Target(), b.Target()});
  EXPECT_EQ(router.Health("g").replicas, 2);
  EXPECT_EQ(router.Health("g").healthy, 1);
  router.SetReplicas("g", {});
  EXPECT_EQ(router.Health("g").replicas, 0);
}

TEST(ReplicaRouterTest, ConcurrentRequestsSpreadOverReplicas) {
  FakeReplica a("a");
  FakeReplica b("b");
  ReplicaRouter router(FastOptions());
  router.SetReplicas("g", {a.Target(), b.Target()});
  router.ProbeOnce();
  std::vector<std::thread> clients;
  std::atomic<int> failures{0};
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (!router.Forward("g", {"1"}).ok()) ++failures;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(a.requests() + b.requests(), 400);
  EXPECT_GT(a.requests(), 0);
  EXPECT_GT(b.requests(), 0);
}

}  // namespace
}  // namespace trainyard::serving_proxy
