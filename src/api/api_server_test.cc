#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/tuning_job_controller.h"
// clang-format off
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <httplib.h>
// clang-format on

#include <thread>

#include "api/http_status.h"
#include "controller/operation_controller.h"
#include "executor/fake_executor.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kJobs = "/v1/projects/p/locations/us-central1/customJobs";
constexpr const char* kJob =
    R"({"displayName":"d","labels":{"team":"nlp"},"jobSpec":{"workerPoolSpecs":[
  {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
   "containerSpec":{"imageUri":"local","command":["echo","hi"]}}]}})";

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    controller_ = std::make_unique<controller::JobController>(
        &store_, &executor_, &images_, nullptr,
        controller::JobControllerOptions{testing::MakeTestDir() / "jobs"});
    ASSERT_TRUE(controller_->Start().ok());
    controller::TuningJobControllerOptions tuning_options;
    tuning_options.poll_interval = std::chrono::milliseconds(0);
    tuning_ = std::make_unique<controller::TuningJobController>(&store_, controller_.get(),
                                                                tuning_options);
    ASSERT_TRUE(tuning_->Start().ok());
    ApiServerOptions options;
    options.port = 0;
    options.max_request_bytes = 64 * 1024;
    options.max_log_wait_seconds = 2;
    if (streaming_) options.is_streaming_path = [](std::string_view p) { return p == "/up"; };
    server_ = std::make_unique<ApiServer>(
        ApiControllers{controller_.get(), tuning_.get(), &operations_}, options);
    auto port = server_->Bind();
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
    thread_ = std::thread([this] { server_->Serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }

  // "<http status> <body as compact JSON>"
  std::pair<int, json> Call(const std::string& method, const std::string& path,
                            const std::string& body = "") {
    httplib::Result r = method == "POST"     ? client_->Post(path, body, "application/json")
                        : method == "DELETE" ? client_->Delete(path)
                                             : client_->Get(path);
    if (!r) return {-1, json()};
    json j = json::parse(r->body, nullptr, false);
    return {r->status, j};
  }
  std::string CreateId() {
    auto [status, job] = Call("POST", kJobs, kJob);
    std::string name = job.value("name", "");
    return name.substr(name.rfind('/') + 1);
  }

  bool streaming_ = false;  // set by fixtures that lift the limit for one path
  int port_ = 0;
  store::MemoryJobStore store_;
  executor::FakeExecutor executor_;
  controller::OperationController operations_{&store_};
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  std::unique_ptr<controller::JobController> controller_;
  std::unique_ptr<controller::TuningJobController> tuning_;
  std::unique_ptr<ApiServer> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ApiServerTest, ASecondServerOnATakenPortIsRefused) {
  ApiServerOptions options;
  options.port = port_;
  ApiServer second(ApiControllers{controller_.get(), tuning_.get(), &operations_}, options);
  auto bound = second.Bind();
  EXPECT_EQ(bound.status().code(), StatusCode::kUnavailable)
      << (bound.ok() ? "bound to " + std::to_string(*bound) : bound.status().ToString());
}

TEST_F(ApiServerTest, CreateReturnsQueuedJobAndGetFindsIt) {
  auto [status, job] = Call("POST", kJobs, kJob);
  ASSERT_EQ(status, 200) << job;
  auto [get_status, got] = Call("GET", "/v1/" + job["name"].get<std::string>());
  EXPECT_EQ(std::to_string(get_status) + " " + got["state"].get<std::string>() + " " +
                got["jobSpec"]["workerPoolSpecs"][0]["replicaCount"].get<std::string>() + " " +
                got["name"].get<std::string>().substr(0, 44),
            "200 JOB_STATE_QUEUED 1 projects/p/locations/us-central1/customJobs/");
}

TEST_F(ApiServerTest, InvalidSpecIsGoogleRpcStatusWithFieldPath) {
  auto [status, body] = Call("POST", kJobs,
                             R"({"displayName":"d","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"2",
       "containerSpec":{"imageUri":"local","command":["true"]}}]}})");
  EXPECT_EQ(std::to_string(status) + " " + body["error"]["status"].get<std::string>() + " " +
                std::to_string(body["error"]["code"].get<int>()) + " " +
                body["error"]["message"].get<std::string>().substr(0, 39),
            "400 INVALID_ARGUMENT 400 jobSpec.workerPoolSpecs[0].replicaCount");
}

// A Vertex service Trainyard lacks answers 501 naming it (the SDK raises MethodNotImplemented with
// the message); any other unknown path stays a 404.
TEST_F(ApiServerTest, AVertexServiceTrainyardLacksIsNotSupportedNotAMissingRoute) {
  auto [s1, b1] = Call("POST",
                       "/v1/projects/p/locations/us-central1/metadataStores?"
                       "metadataStoreId=default");
  auto [s2, b2] = Call("GET", "/v1/projects/p/locations/us-central1/colours");
  EXPECT_EQ(std::to_string(s1) + " " + b1["error"].value("status", "") + " " +
                b1["error"].value("message", "") + " | " + std::to_string(s2) + " " +
                b2["error"].value("status", ""),
            "501 UNIMPLEMENTED Vertex ML Metadata (Experiments: aiplatform.init(experiment=...), "
            "start_run, log_metrics) is not supported by Trainyard (POST "
            "/v1/projects/p/locations/us-central1/metadataStores); docs/api.md lists the APIs it "
            "serves | 404 NOT_FOUND");
}

TEST_F(ApiServerTest, UnknownFieldsAndQueryParametersAreRejected) {
  auto [s1, b1] = Call("POST", kJobs, R"({"displayName":"d","colour":"red"})");
  auto [s2, b2] = Call("GET", std::string(kJobs) + "?page_size=3");
  EXPECT_EQ(std::to_string(s1) + " " + b1["error"]["message"].get<std::string>() + "\n" +
                std::to_string(s2) + " " + b2["error"]["message"].get<std::string>().substr(0, 63),
            "400 Invalid JSON payload received. Unknown name \"colour\" at 'customJob': Cannot "
            "find field.\n400 Invalid JSON payload received. Unknown name \"page_size\": Cannot");
}

TEST_F(ApiServerTest, MalformedEmptyAndOversizedBodies) {
  auto [s1, b1] = Call("POST", kJobs, "{\"displayName\":");
  auto [s2, b2] = Call("POST", kJobs, "");
  auto [s3, b3] = Call("POST", kJobs, std::string(100 * 1024, ' '));
  EXPECT_EQ(std::to_string(s1) + " " + std::to_string(s2) + " " + std::to_string(s3) + " " +
                b3["error"]["message"].get<std::string>(),
            "400 400 413 request body exceeds the limit of 65536 bytes");
}

class StreamingApiServerTest : public ApiServerTest {
 protected:
  StreamingApiServerTest() { streaming_ = true; }
};

// Limits enforced before routing: an oversized body that is still read in full is answered 413
// (not a connection reset), and no handler sees it.
TEST_F(StreamingApiServerTest, OversizedBodyIsReadAndAnswered413WithoutRunningTheHandler) {
  auto [s1, b1] = Call("POST", kJobs, std::string(8 << 20, 'x'));
  auto [s2, b2] = Call("POST", kJobs, kJob);
  auto [s3, b3] = Call("GET", kJobs);
  EXPECT_EQ(std::to_string(s1) + " " + b1["error"].value("message", "") + " " + std::to_string(s2) +
                " " + std::to_string(b3["customJobs"].size()),
            "413 request body exceeds the limit of 65536 bytes 200 1");
}

// The first line the server answers to a request that asks first (`Expect: 100-continue`, as curl
// does above 1 MiB) with a body of `length` bytes; the body is never sent.
std::string FirstLineOfExpectContinue(int port, const std::string& path, size_t length) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  const std::string head =
      "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(length) +
      "\r\nContent-Type: application/octet-stream\r\n"
      "Expect: 100-continue\r\n\r\n";
  (void)::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  std::string got;
  char c;
  while (got.find("\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) got += c;
  ::close(fd);
  return got.substr(0, got.find("\r\n"));
}

// Object uploads (streaming paths) take any size, also from clients that ask first; other paths
// are refused before the body is sent.
TEST_F(StreamingApiServerTest, ExpectContinueIsAcceptedOnStreamingPathsOnly) {
  EXPECT_EQ(FirstLineOfExpectContinue(port_, "/up", 8 << 20) + " | " +
                FirstLineOfExpectContinue(port_, kJobs, 8 << 20),
            "HTTP/1.1 100 Continue | HTTP/1.1 413 Payload Too Large");
}

TEST_F(ApiServerTest, NotFoundForUnknownJobsAndRoutes) {
  auto [s1, b1] = Call("GET", std::string(kJobs) + "/123");
  auto [s2, b2] = Call("GET", "/v2/nothing");
  EXPECT_EQ(std::to_string(s1) + " " + b1["error"]["status"].get<std::string>() + " " +
                std::to_string(s2) + " " + b2["error"]["status"].get<std::string>(),
            "404 NOT_FOUND 404 NOT_FOUND");
}

TEST_F(ApiServerTest, ListPagesAndFilters) {
  for (int i = 0; i < 3; ++i) CreateId();
  auto [s1, page1] = Call("GET", std::string(kJobs) + "?pageSize=2");
  auto [s2, page2] = Call("GET", std::string(kJobs) + "?pageSize=2&pageToken=" +
                                     page1["nextPageToken"].get<std::string>());
  auto [s3, filtered] = Call("GET", std::string(kJobs) + "?filter=" +
                                        httplib::detail::encode_query_param(
                                            "state=\"JOB_STATE_RUNNING\" AND labels.team=nlp"));
  auto [s4, bad] = Call("GET", std::string(kJobs) + "?filter=colour%3Dred");
  EXPECT_EQ(std::to_string(page1["customJobs"].size()) + " " +
                std::to_string(page2["customJobs"].size()) + " " +
                std::to_string(page2.contains("nextPageToken")) + " " +
                std::to_string(filtered.contains("customJobs")) + " " + std::to_string(s4),
            "2 1 0 0 400");
}

TEST_F(ApiServerTest, CancelThenCancelAgainIsFailedPrecondition) {
  std::string id = CreateId();
  auto [s1, b1] = Call("POST", std::string(kJobs) + "/" + id + ":cancel", "{}");
  auto [s2, job] = Call("GET", std::string(kJobs) + "/" + id);
  auto [s3, b3] = Call("POST", std::string(kJobs) + "/" + id + ":cancel");
  EXPECT_EQ(std::to_string(s1) + " " + b1.dump() + " " + job["state"].get<std::string>() + " " +
                std::to_string(job["error"]["code"].get<int>()) + " " + std::to_string(s3) + " " +
                b3["error"]["status"].get<std::string>(),
            "200 {} JOB_STATE_CANCELLED 1 400 FAILED_PRECONDITION");
}

TEST_F(ApiServerTest, DeleteNeedsAFinishedJobAndReturnsADoneOperation) {
  std::string id = CreateId();
  auto [s1, b1] = Call("DELETE", std::string(kJobs) + "/" + id);
  ASSERT_TRUE(executor_.Advance(id, executor::GangState::kSucceeded).ok());
  auto [s2, op] = Call("DELETE", std::string(kJobs) + "/" + id);
  auto [s3, b3] = Call("GET", std::string(kJobs) + "/" + id);
  EXPECT_EQ(std::to_string(s1) + " " + std::to_string(s2) + " " + op["done"].dump() + " " +
                std::to_string(s3),
            "400 200 true 404");
}

TEST_F(ApiServerTest, LogsLongPollUntilALineArrives) {
  std::string id = CreateId();
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    (void)executor_.AppendLog(id, 0, 0, "epoch 1 loss=0.5");
  });
  auto [s1, page] = Call("GET", std::string(kJobs) + "/" + id + ":logs?waitSeconds=2");
  writer.join();
  ASSERT_EQ(s1, 200) << page;
  auto [s2, filtered] = Call("GET", std::string(kJobs) + "/" + id + ":logs?taskName=workerpool1-0");
  EXPECT_EQ(page["entries"][0]["text"].get<std::string>() + " " +
                page["entries"][0]["taskName"].get<std::string>() + " " +
                page["jobState"].get<std::string>() + " " + page["done"].dump() + " " +
                std::to_string(filtered["entries"].size()),
            "epoch 1 loss=0.5 workerpool0-0 JOB_STATE_QUEUED false 0");
}

TEST(HttpStatusTest, FollowsGoogleRpcMapping) {
  std::string s;
  for (auto c : {StatusCode::kInvalidArgument, StatusCode::kFailedPrecondition,
                 StatusCode::kNotFound, StatusCode::kAlreadyExists, StatusCode::kCancelled,
                 StatusCode::kUnavailable, StatusCode::kDeadlineExceeded,
                 StatusCode::kResourceExhausted, StatusCode::kUnimplemented}) {
    s += std::to_string(HttpStatusFor(c)) + " ";
  }
  EXPECT_EQ(s, "400 400 404 409 499 503 504 429 501 ");
}

constexpr const char* kTuningJobs = "/v1/projects/p/locations/us-central1/hyperparameterTuningJobs";

std::string TuningJobBody(const std::string& display_name, const std::string& team) {
  return R"({"displayName":")" + display_name + R"(","labels":{"team":")" + team + R"("},
    "studySpec":{"metrics":[{"metricId":"m","goal":"MAXIMIZE"}],
      "parameters":[{"parameterId":"x","doubleValueSpec":{"minValue":0,"maxValue":1}}],
      "algorithm":"RANDOM_SEARCH"},
    "maxTrialCount":1,"parallelTrialCount":1,
    "trialJobSpec":{"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},
      "replicaCount":"1","containerSpec":{"imageUri":"local","command":["true"]}}]}})";
}

// hyperparameterTuningJobs go through the same registration, list contract and error mapping.
TEST_F(ApiServerTest, TuningJobsListWithTheCustomJobFilterAndPageTokens) {
  auto [c1, a] = Call("POST", kTuningJobs, TuningJobBody("bert-lr", "nlp"));
  auto [c2, b] = Call("POST", kTuningJobs, TuningJobBody("resnet", "cv"));
  ASSERT_EQ(c1 * 1000 + c2, 200200) << a.dump() << b.dump();
  auto [s1, page1] = Call("GET", std::string(kTuningJobs) + "?pageSize=1");
  auto [s2, page2] = Call("GET", std::string(kTuningJobs) + "?pageSize=1&pageToken=" +
                                     page1["nextPageToken"].get<std::string>());
  auto [s3, filtered] =
      Call("GET",
           std::string(kTuningJobs) + "?filter=" +
               httplib::detail::encode_query_param("labels.team=nlp AND state!=JOB_STATE_FAILED"));
  auto [s4, bad_filter] = Call("GET", std::string(kTuningJobs) + "?filter=colour%3Dred");
  auto [s5, bad_token] = Call("GET", std::string(kTuningJobs) + "?pageToken=1");
  EXPECT_EQ(page1["hyperparameterTuningJobs"][0]["displayName"].get<std::string>() + " " +
                page2["hyperparameterTuningJobs"][0]["displayName"].get<std::string>() + " " +
                std::to_string(page2.contains("nextPageToken")) + " " +
                filtered["hyperparameterTuningJobs"][0]["displayName"].get<std::string>() + " " +
                std::to_string(filtered["hyperparameterTuningJobs"].size()) + " " +
                bad_filter["error"]["status"].get<std::string>() + " " + std::to_string(s5) + " " +
                bad_token["error"]["status"].get<std::string>(),
            "resnet bert-lr 0 bert-lr 1 INVALID_ARGUMENT 400 INVALID_ARGUMENT");
}

TEST_F(ApiServerTest, TuningJobErrorsAreGoogleRpcStatus) {
  std::string bad = TuningJobBody("x", "nlp");
  bad.replace(bad.find("\"maxTrialCount\""), 15, "\"maxTrialCont\"");
  auto [s1, unknown] = Call("POST", kTuningJobs, bad);
  auto [s2, missing] = Call("GET", std::string(kTuningJobs) + "/404");
  auto [s3, created] = Call("POST", kTuningJobs, TuningJobBody("x", "nlp"));
  std::string name = created.value("name", "");
  auto [s4, running] = Call("DELETE", "/v1/" + name);  // its trial is queued: the job is RUNNING
  auto [s5, cancelled] = Call("POST", "/v1/" + name + ":cancel", "{}");
  EXPECT_EQ(std::to_string(s1) + " " +
                unknown["error"]["message"].get<std::string>().substr(0, 26) + " | " +
                std::to_string(s2) + " " + missing["error"]["status"].get<std::string>() + " | " +
                std::to_string(s3) + " " + created["state"].get<std::string>() + " | " +
                std::to_string(s4) + " " + running["error"]["status"].get<std::string>() + " | " +
                std::to_string(s5),
            "400 Invalid JSON payload recei | 404 NOT_FOUND | 200 JOB_STATE_RUNNING | 400 "
            "FAILED_PRECONDITION | 200");
}

}  // namespace
}  // namespace trainyard::api
