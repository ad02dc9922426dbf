// The :scalars, /metrics and console routes on a real ApiServer (FakeExecutor, in-memory store).
#include "observability/scalars_route.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/api_server.h"
#include "controller/operation_controller.h"
#include "executor/fake_executor.h"
#include "observability/console_routes.h"
#include "store/memory_job_store.h"
#include "tensorboard/test_events.h"
#include "tensorboard/tfrecord.h"
#include "testing/test_util.h"

namespace trainyard::observability {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace tensorboard::test_events;
using tensorboard::EncodeTfRecord;

constexpr const char* kJobs = "/v1/projects/p/locations/us-central1/customJobs";

std::string JobWith(const std::string& job_spec_extra, const std::string& args) {
  return R"({"displayName":"d","jobSpec":{)" + job_spec_extra + R"("workerPoolSpecs":[
    {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
     "containerSpec":{"imageUri":"local","command":["true"],"args":)" +
         args + "}}]}}";
}

const ConsoleAsset kFakeAssets[] = {
    {"index.html", "text/html; charset=utf-8", "<html>console</html>"},
    {"assets/app-1.js", "text/javascript; charset=utf-8", "console.log(1)"},
};

class ObservabilityRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTestDir();
    setenv("TRAINYARD_BUCKET_ROOT", (root_ / "buckets").c_str(), 1);
    controller::JobControllerOptions options_jobs;
    options_jobs.jobs_dir = root_ / "jobs";
    controller_ = std::make_unique<controller::JobController>(&store_, &executor_, &images_,
                                                              nullptr, options_jobs);
    ASSERT_TRUE(controller_->Start().ok());
    api::ApiServerOptions options;
    options.port = 0;
    server_ = std::make_unique<api::ApiServer>(
        api::ApiControllers{controller_.get(), nullptr, &operations_}, options);
    RegisterScalarsRoute(server_->routes(), controller_.get());
    RegisterMetricsRoute(server_->routes(), &metrics_);
    auto port = server_->Bind();
    ASSERT_TRUE(port.ok());
    thread_ = std::thread([this] { server_->Serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }
  std::string Create(const std::string& body) {
    auto r = client_->Post(kJobs, body, "application/json");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no response");
    return json::parse(r->body)["name"].get<std::string>();
  }
  json Scalars(const std::string& name, const std::string& after = "") {
    auto r = client_->Get("/v1/" + name + ":scalars" + (after.empty() ? "" : "?after=" + after));
    if (!r) return json();
    json j = json::parse(r->body);
    j["httpStatus"] = r->status;
    return j;
  }

  fs::path root_;
  store::MemoryJobStore store_;
  controller::OperationController operations_{&store_};
  executor::FakeExecutor executor_;
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  ServerMetrics metrics_{&store_, nullptr};
  std::unique_ptr<controller::JobController> controller_;
  std::unique_ptr<api::ApiServer> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

std::string Points(const json& page) {
  std::string out;
  for (const auto& s : page["series"]) {
    out += s["tag"].get<std::string>() + ":";
    for (const auto& p : s["points"]) out += " " + p[0].dump() + "=" + p[2].dump();
    out += "; ";
  }
  return out;
}

TEST_F(ObservabilityRoutesTest, ScalarsOfTheBaseOutputDirectoryIncrementally) {
  const std::string name =
      Create(JobWith(R"("baseOutputDirectory":{"outputUriPrefix":"gs://bkt/out"},)", "[]"));
  const fs::path logs = root_ / "buckets/bkt/out/logs";
  fs::create_directories(logs);
  const fs::path file = logs / "events.out.tfevents.1.h.1";
  std::ofstream(file, std::ios::binary | std::ios::app)
      << EncodeTfRecord(EventWith(1.7e9, 10, {SimpleValue("train/loss", 0.5f)}));
  json first = Scalars(name);
  std::ofstream(file, std::ios::binary | std::ios::app)
      << EncodeTfRecord(EventWith(1.7e9, 20, {SimpleValue("train/loss", 0.25f)}));
  json second = Scalars(name, first["nextCursor"].get<std::string>());
  EXPECT_EQ(first["logDir"].get<std::string>() + " " + first["jobState"].get<std::string>() +
                " | " + Points(first) + "| " + Points(second),
            "gs://bkt/out/logs/ JOB_STATE_QUEUED | train/loss: 10=0.5; | train/loss: 20=0.25; ");
}

TEST_F(ObservabilityRoutesTest, TensorboardDirArgumentNoDirAndBadCursor) {
  const std::string with_arg = Create(JobWith("", R"(["--tensorboard-dir", "gs://bkt/tb"])"));
  const std::string without = Create(JobWith("", "[]"));
  json a = Scalars(with_arg);
  json b = Scalars(without);
  json bad = Scalars(with_arg, "garbage");
  EXPECT_EQ(a["logDir"].dump() + " " + b["logDir"].dump() + " " + bad["httpStatus"].dump() + " " +
                bad["error"]["message"].get<std::string>().substr(0, 40),
            "\"gs://bkt/tb\" null 400 after: not a cursor returned by :scalars");
}

TEST_F(ObservabilityRoutesTest, MetricsCountRequestsByRoute) {
  const std::string name = Create(JobWith("", "[]"));
  Scalars(name);
  Scalars(name);
  const std::string want =
      "trainyard_http_requests_total{method=\"GET\",route=\"/v1/projects/{p}/"
      "locations/{l}/customJobs/{id}:scalars\",code=\"200\"} 2\n";
  // A request is counted once its response has been written, which the client may see first:
  // the second count can land a moment after the second response.
  std::string body, content_type;
  for (int i = 0; i < 100 && body.find(want) == std::string::npos; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto r = client_->Get("/metrics");
    ASSERT_TRUE(r);
    body = r->body;
    content_type = r->get_header_value("Content-Type");
  }
  EXPECT_EQ(content_type, kPrometheusContentType);
  EXPECT_NE(body.find(want), std::string::npos) << body;
}

TEST(ConsoleRoutesTest, ServesAssetsOrSaysHowToBuildTheConsole) {
  httplib::Server with, without;
  api::RouteTable with_routes(with, {}), without_routes(without, {});
  RegisterConsoleRoutes(with_routes, kFakeAssets);
  RegisterConsoleRoutes(without_routes, {});
  const int p1 = with.bind_to_any_port("127.0.0.1");
  const int p2 = without.bind_to_any_port("127.0.0.1");
  std::thread t1([&] { with.listen_after_bind(); });
  std::thread t2([&] { without.listen_after_bind(); });
  httplib::Client c1("127.0.0.1", p1), c2("127.0.0.1", p2);
  auto index = c1.Get("/");
  auto js = c1.Get("/assets/app-1.js");
  auto missing = c1.Get("/assets/nope.js");
  auto not_built = c2.Get("/");
  with.stop();
  without.stop();
  t1.join();
  t2.join();
  ASSERT_TRUE(index && js && missing && not_built);
  EXPECT_EQ(
      index->body + " " + js->get_header_value("Content-Type") + " " +
          std::to_string(missing->status) + " " +
          std::to_string(not_built->body.find("without the web console") != std::string::npos) +
          " " + index->get_header_value("Content-Security-Policy").substr(0, 19),
      "<html>console</html> text/javascript; charset=utf-8 404 1 default-src 'self';");
  EXPECT_NE(missing->body.find("no such console asset: assets/nope.js"), std::string::npos)
      << missing->body;
}

}  // namespace
}  // namespace trainyard::observability
