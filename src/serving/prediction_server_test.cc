#include "serving/prediction_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <future>
#include <thread>

namespace trainyard::serving {
namespace {

// Class 1 for texts with an even length, with probabilities [0.25, 0.75]; else class 0.
StatusOr<std::vector<TextPrediction>> ByLength(const std::vector<std::string>& texts) {
  std::vector<TextPrediction> out;
  for (const auto& t : texts) {
    bool even = t.size() % 2 == 0;
    out.push_back(
        {even ? 1 : 0, even ? std::vector<float>{0.25f, 0.75f} : std::vector<float>{0.5f, 0.5f}});
  }
  return out;
}

class PredictionServerTest : public ::testing::Test {
 protected:
  void Start(BatcherOptions batching = {.max_batch_size = 8, .max_delay = {}}) {
    batcher_ = std::make_unique<DynamicBatcher>(ByLength, batching);
    server_ = std::make_unique<PredictionServer>(
        PredictionServerOptions{.host = "127.0.0.1",
                                .port = 0,
                                .predict_route = "/v1/endpoints/1/deployedModels/2:predict",
                                .health_route = "/v1/endpoints/1/deployedModels/2",
                                .threads = 8,
                                .max_request_bytes = 4096});
    auto port = server_->Bind();
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
    thread_ = std::thread([this] { server_->Serve(); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string Call(const std::string& method, const std::string& path,
                   const std::string& body = "") {
    httplib::Client client("127.0.0.1", port_);
    auto res = method == "GET" ? client.Get(path.c_str())
                               : client.Post(path.c_str(), body, "application/json");
    if (!res) return "no response";
    return std::to_string(res->status) + " " + res->body;
  }

  std::unique_ptr<DynamicBatcher> batcher_;
  std::unique_ptr<PredictionServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(PredictionServerTest, HealthIsUnavailableUntilTheModelIsSet) {
  Start();
  std::string before = Call("GET", "/v1/endpoints/1/deployedModels/2");
  std::string predict =
      Call("POST", "/v1/endpoints/1/deployedModels/2:predict", R"({"instances": ["ab"]})");
  server_->SetModel(batcher_.get(), {"negative", "positive"});
  EXPECT_EQ(before.substr(0, 3) + " " + predict.substr(0, 3) + " " +
                Call("GET", "/v1/endpoints/1/deployedModels/2"),
            "503 503 200 {}\n");
}

TEST_F(PredictionServerTest, PredictsEachInstanceInOrder) {
  Start();
  server_->SetModel(batcher_.get(), {"negative", "positive"});
  EXPECT_EQ(Call("POST", "/v1/endpoints/1/deployedModels/2:predict",
                 R"({"instances": ["ab", {"text": "abc"}], "parameters": {}})"),
            "200 {\"predictions\":[{\"label\":\"positive\",\"probabilities\":[0.25,0.75]},"
            "{\"label\":\"negative\",\"probabilities\":[0.5,0.5]}]}\n");
}

TEST_F(PredictionServerTest, RefusesBadLargeAndMisroutedRequests) {
  Start();
  server_->SetModel(batcher_.get(), {"negative", "positive"});
  nlohmann::json bad = nlohmann::json::parse(
      Call("POST", "/v1/endpoints/1/deployedModels/2:predict", R"({"instances": [1]})").substr(4));
  std::string large = R"({"instances": [")" + std::string(5000, 'a') + "\"]}";
  std::string too_large = Call("POST", "/v1/endpoints/1/deployedModels/2:predict", large);
  std::string other = Call("GET", "/predict");
  EXPECT_EQ(bad["error"]["status"].get<std::string>() + " " +
                bad["error"]["message"].get<std::string>() + "\n" + too_large.substr(0, 3) + " " +
                other.substr(0, 3),
            "INVALID_ARGUMENT instances[0]: expected a string or {\"text\": \"...\"}, got a "
            "number\n413 404");
}

TEST_F(PredictionServerTest, ConcurrentRequestsAreBatchedTogether) {
  Start({.max_batch_size = 4, .max_delay = std::chrono::seconds(60)});
  server_->SetModel(batcher_.get(), {"negative", "positive"});
  std::vector<std::future<std::string>> calls;
  for (int i = 0; i < 4; ++i) {
    calls.push_back(std::async(std::launch::async, [&] {
      return Call("POST", "/v1/endpoints/1/deployedModels/2:predict", R"({"instances": ["ab"]})")
          .substr(0, 3);
    }));
  }
  std::string codes;
  for (auto& c : calls) codes += c.get() + " ";
  EXPECT_EQ(codes + std::to_string(batcher_->stats().batches), "200 200 200 200 1");
}

TEST_F(PredictionServerTest, ASecondServerOnATakenPortFails) {
  Start();
  PredictionServer second(
      {.host = "127.0.0.1", .port = port_, .predict_route = "/p", .health_route = "/h"});
  EXPECT_EQ(second.Bind().status().code(), StatusCode::kUnavailable);
}

TEST_F(PredictionServerTest, HostileRequestsAreRefusedAndTheServerLives) {
  Start();
  server_->SetModel(batcher_.get(), {"negative", "positive"});
  const std::string route = "/v1/endpoints/1/deployedModels/2:predict";
  std::string deep = R"({"instances": [)" + std::string(2000, '[') + std::string(2000, ']') + "]}";
  std::string codes = Call("POST", route, deep).substr(0, 3) + " " +
                      Call("POST", route, "{\"instances\": [\"\xff\xfe\"]}").substr(0, 3) + " ";
  httplib::Client client("127.0.0.1", port_);
  auto huge = client.Post(route.c_str(), {{"X-Big", std::string(1 << 20, 'a')}},
                          R"({"instances": ["ab"]})", "application/json");
  codes += std::to_string(huge ? huge->status : 0) + " ";
  EXPECT_EQ(codes + Call("POST", route, R"({"instances": ["ab"]})").substr(0, 3),
            "400 400 400 200");
}

}  // namespace
}  // namespace trainyard::serving
