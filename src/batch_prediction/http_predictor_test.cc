#include "batch_prediction/http_predictor.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <thread>

namespace trainyard::batch_prediction {
namespace {

using nlohmann::json;

// A model server of the serving contract: predicts a text's length; a batch holding anything but
// texts is refused with 400 naming it; unhealthy for its first `unhealthy` health checks;
// `broken` answers every predict with 500.
class FakeModel {
 public:
  explicit FakeModel(int unhealthy = 0, bool broken = false) : unhealthy_(unhealthy) {
    server_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      res.status = checks_++ < unhealthy_ ? 503 : 200;
    });
    server_.Post("/predict", [this, broken](const httplib::Request& req, httplib::Response& res) {
      ++requests;
      if (broken) {
        res.status = 500;
        return;
      }
      json body = json::parse(req.body);
      json predictions = json::array();
      for (const json& i : body["instances"]) {
        if (!i.is_string()) {
          res.status = 400;
          res.set_content(json{{"error", {{"message", "not a text: " + i.dump()}}}}.dump(),
                          "application/json");
          return;
        }
        predictions.push_back(i.get<std::string>().size());
      }
      last_parameters = body.value("parameters", json());
      res.set_content(json{{"predictions", predictions}}.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~FakeModel() {
    server_.stop();
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::atomic<int> requests{0};
  json last_parameters;

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> checks_{0};
  int unhealthy_;
};

TEST(HttpPredictorTest, SplitsABatchOverTheReplicasAndKeepsTheOrder) {
  FakeModel a(2), b;
  HttpPredictor p({a.address(), b.address()}, "/predict", "/health");
  ASSERT_TRUE(p.WaitHealthy(std::chrono::seconds(10)).ok());
  auto r = p.Predict({"a", "bb", "ccc", "dddd", "eeeee"}, json{{"t", 1}});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<int> got;
  for (auto& x : *r) got.push_back(x->get<int>());
  EXPECT_EQ(got, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(a.requests, 1);
  EXPECT_EQ(b.requests, 1);
  EXPECT_EQ(a.last_parameters, json({{"t", 1}}));
}

TEST(HttpPredictorTest, ARefusedBatchIsSentAgainOneInstanceAtATime) {
  FakeModel a;
  HttpPredictor p({a.address()}, "/predict", "/health");
  auto r = p.Predict({"ok", 7, "fine"}, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].value(), 2);
  EXPECT_EQ((*r)[1].status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*r)[1].status().message(), "not a text: 7");
  EXPECT_EQ((*r)[2].value(), 4);
  EXPECT_EQ(a.requests, 4);
}

TEST(HttpPredictorTest, AModelThatDoesNotAnswerFailsTheBatchNamingIt) {
  FakeModel broken(0, true);
  HttpPredictor p({broken.address()}, "/predict", "/health");
  auto r = p.Predict({"a"}, nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(broken.address()), std::string::npos) << r.status();
  EXPECT_EQ(broken.requests, 4);
  HttpPredictor gone({"127.0.0.1:1"}, "/predict", "/health");
  Status s = gone.WaitHealthy(std::chrono::milliseconds(300));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("127.0.0.1:1"), std::string::npos) << s;
}

}  // namespace
}  // namespace trainyard::batch_prediction
