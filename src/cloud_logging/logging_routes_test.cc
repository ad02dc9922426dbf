// entries:list over a JobController with a FakeExecutor's logs, as gcloud calls it.
// The tuning controller (and with it Eigen) comes before cpp-httplib's header: see api_server.h.
#include "controller/tuning_job_controller.h"
// clang-format off: the order above matters
#include "cloud_logging/logging_routes.h"
// clang-format on

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <thread>

#include "controller/legacy_job_controller.h"
#include "executor/fake_executor.h"
#include "spec/custom_job_json.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::cloud_logging {
namespace {

using nlohmann::json;

class LoggingRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    controller_ = std::make_unique<controller::JobController>(
        &store_, &executor_, &images_, nullptr,
        controller::JobControllerOptions{testing::MakeTestDir() / "jobs"});
    ASSERT_TRUE(controller_->Start().ok());
    auto request = spec::ParseCustomJob(
        R"({"displayName":"d","jobSpec":{"workerPoolSpecs":[{"machineSpec":{"machineType":
        "n1-standard-4"},"replicaCount":"1","containerSpec":{"imageUri":"local","command":["true"]}},
        {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
        "containerSpec":{"imageUri":"local","command":["true"]}}]}})",
        spec::DecodeMode::kRequest);
    ASSERT_TRUE(request.ok()) << request.status();
    auto job = controller_->Create("projects/p/locations/us-central1", *request);
    ASSERT_TRUE(job.ok()) << job.status();
    id_ = job->Id();
    for (int i = 1; i <= 3; ++i) {
      ASSERT_TRUE(executor_.AppendLog(id_, 0, 0, "epoch " + std::to_string(i)).ok());
      ASSERT_TRUE(executor_.AppendLog(id_, 1, 0, "worker " + std::to_string(i), true).ok());
    }
    RegisterLoggingRoutes(routes_, controller_.get());
    int port = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port);
  }
  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  // "severity task text; ..." of one call, then " next=TOKEN" when there is one.
  std::string List(const std::string& extra_filter, const std::string& order = "timestamp asc",
                   int page_size = 50, const std::string& token = "",
                   const std::string& project = "p") {
    json body = {{"resourceNames", {"projects/" + project}},
                 {"filter", "resource.type=\"ml_job\" AND resource.labels.job_id=\"" + id_ + "\"" +
                                extra_filter},
                 {"orderBy", order},
                 {"pageSize", page_size}};
    if (!token.empty()) body["pageToken"] = token;
    auto r = client_->Post("/v2/entries:list?alt=json", body.dump(), "application/json");
    if (!r) return "no response";
    json out = json::parse(r->body);
    if (r->status != 200)
      return std::to_string(r->status) + " " + out["error"].value("message", "");
    std::string s;
    for (const auto& e : out.value("entries", json::array())) {
      s += e["severity"].get<std::string>() + " " +
           e["resource"]["labels"]["task_name"].get<std::string>() + " " +
           e["textPayload"].get<std::string>() + "; ";
    }
    if (out.contains("nextPageToken")) s += "next=" + out["nextPageToken"].get<std::string>();
    return s;
  }

  store::MemoryJobStore store_;
  executor::FakeExecutor executor_;
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  std::unique_ptr<controller::JobController> controller_;
  std::string id_;
  httplib::Server server_;
  api::RouteTable routes_{server_, {}};
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(LoggingRoutesTest, TaskFilterAndOrder) {
  EXPECT_EQ(List(" AND resource.labels.task_name=\"workerpool0-0\""),
            "INFO workerpool0-0 epoch 1; INFO workerpool0-0 epoch 2; INFO workerpool0-0 epoch 3; ");
  EXPECT_EQ(List(" AND severity>=ERROR", "timestamp desc", 2).substr(0, 58),
            "ERROR workerpool1-0 worker 3; ERROR workerpool1-0 worker 2");
}

TEST_F(LoggingRoutesTest, PagesCoverEveryLineOnce) {
  for (const std::string order : {"timestamp asc", "timestamp desc"}) {
    std::string token, all;
    for (int page = 0; page < 10; ++page) {
      std::string got = List(" AND textPayload:\"epoch\"", order, 2, token);
      size_t next = got.find("next=");
      all += got.substr(0, next);
      if (next == std::string::npos) break;
      token = got.substr(next + 5);
    }
    EXPECT_EQ(all, order == "timestamp asc"
                       ? "INFO workerpool0-0 epoch 1; INFO workerpool0-0 epoch 2; INFO "
                         "workerpool0-0 epoch 3; "
                       : "INFO workerpool0-0 epoch 3; INFO workerpool0-0 epoch 2; INFO "
                         "workerpool0-0 epoch 1; ");
  }
}

TEST_F(LoggingRoutesTest, BadRequestsAreClear400s) {
  EXPECT_EQ(List(" AND jsonPayload.x=1").substr(0, 3), "400");
  EXPECT_EQ(List("", "insertId asc").substr(0, 3), "400");
  auto r = client_->Post("/v2/entries:list",
                         R"({"resourceNames": ["projects/p"], "filter": "severity=INFO"})",
                         "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("resource.labels.job_id"), std::string::npos);
  // A misspelt request field: Google's wording, from the one place it is written (protojson).
  auto typo =
      client_->Post("/v2/entries:list", R"({"resourceNames": ["projects/p"], "pageSise": 5})",
                    "application/json");
  ASSERT_TRUE(typo);
  EXPECT_EQ(
      std::to_string(typo->status) + " " +
          std::to_string(
              typo->body.find(
                  R"(Invalid JSON payload received. Unknown name \"pageSise\" at '': Cannot find field.)") !=
              std::string::npos),
      "400 1")
      << typo->body;
}

// A job's log lines are read only through its own project: the filter's job id is not enough.
TEST_F(LoggingRoutesTest, AnotherProjectsJobHasNoEntriesAndAProjectIsRequired) {
  EXPECT_EQ(List("", "timestamp asc", 50, "", "p").substr(0, 29), "INFO workerpool0-0 epoch 1; E");
  EXPECT_EQ(List("", "timestamp asc", 50, "", "q"), "");
  EXPECT_EQ(List("", "timestamp asc", 50, "", "*"), "");
  auto r = client_->Post("/v2/entries:list",
                         R"({"filter": "resource.labels.job_id=\")" + id_ + R"(\""})",
                         "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("resourceNames: name the project"), std::string::npos) << r->body;
}

// An AI Platform job's log by its jobId: its HP trials' lines, labelled with their trial, in
// AI Platform's task names, with the legacy filter gcloud ai-platform jobs stream-logs sends.
class LegacyLoggingTest : public LoggingRoutesTest {
 protected:
  void SetUp() override {
    LoggingRoutesTest::SetUp();
    controller::TuningJobControllerOptions o;
    o.poll_interval = std::chrono::milliseconds(0);
    tuning_ = std::make_unique<controller::TuningJobController>(&store_, controller_.get(), o);
    ASSERT_TRUE(tuning_->Start().ok());
    legacy_ = std::make_unique<controller::LegacyJobController>(&store_, controller_.get(),
                                                                tuning_.get());
    auto job = legacy_->Create("projects/p", R"({"trainingInput":{"region":"us-central1",
        "masterConfig":{"imageUri":"local","containerCommand":["true"]},
        "hyperparameters":{"goal":"MAXIMIZE","maxTrials":2,"maxParallelTrials":2,"params":[
        {"parameterName":"x","type":"DISCRETE","discreteValues":[1,2]}]}}})",
                               "hp_job");
    ASSERT_TRUE(job.ok()) << job.status();
    tuning_->PollOnce();
    auto streams = legacy_->LogStreams("p", "hp_job");
    ASSERT_TRUE(streams.ok() && *streams && (*streams)->size() == 2) << streams.status();
    for (const auto& s : **streams) {
      ASSERT_TRUE(executor_.AppendLog(s.custom_job_id, 0, 0, "line of trial " + s.trial_id).ok());
    }
    legacy_routes_ = std::make_unique<api::RouteTable>(legacy_server_, api::AuthOptions{});
    RegisterLoggingRoutes(*legacy_routes_, controller_.get(), legacy_.get());
    int port = legacy_server_.bind_to_any_port("127.0.0.1");
    legacy_thread_ = std::thread([this] { legacy_server_.listen_after_bind(); });
    legacy_client_ = std::make_unique<httplib::Client>("127.0.0.1", port);
  }
  void TearDown() override {
    legacy_server_.stop();
    if (legacy_thread_.joinable()) legacy_thread_.join();
    LoggingRoutesTest::TearDown();
  }
  // "task trial text; ..." sorted, then " pages=N" (walking pageSize=1).
  std::string Walk(const std::string& extra) {
    std::vector<std::string> seen;
    std::string token;
    int pages = 0;
    do {
      json body = {{"resourceNames", {"projects/p"}},
                   {"filter",
                    "(resource.type=\"ml_job\" OR resource.type=\"cloudml_job\") AND "
                    "resource.labels.job_id=\"hp_job\"" +
                        extra},
                   {"orderBy", "timestamp asc"},
                   {"pageSize", 1}};
      if (!token.empty()) body["pageToken"] = token;
      auto r = legacy_client_->Post("/v2/entries:list", body.dump(), "application/json");
      if (!r || r->status != 200) return r ? r->body : "no response";
      json out = json::parse(r->body);
      for (const auto& e : out.value("entries", json::array())) {
        seen.push_back(e["resource"]["labels"].value("task_name", "") + " " +
                       e["labels"].value("ml.googleapis.com/trial_id", "") + " " +
                       e.value("textPayload", ""));
      }
      token = out.value("nextPageToken", "");
      ++pages;
    } while (!token.empty() && pages < 10);
    std::sort(seen.begin(), seen.end());
    std::string s;
    for (const auto& line : seen) s += line + "; ";
    return s + "pages=" + std::to_string(pages);
  }

  std::unique_ptr<controller::TuningJobController> tuning_;
  std::unique_ptr<controller::LegacyJobController> legacy_;
  httplib::Server legacy_server_;
  std::unique_ptr<api::RouteTable> legacy_routes_;
  std::thread legacy_thread_;
  std::unique_ptr<httplib::Client> legacy_client_;
};

TEST_F(LegacyLoggingTest, TrialsAreMergedByJobIdWithTheirTrialAndAiPlatformTaskNames) {
  EXPECT_EQ(Walk(""),
            "master-replica-0 1 line of trial 1; master-replica-0 2 line of trial 2; pages=2");
  EXPECT_EQ(Walk(" AND labels.trial_id=\"2\" AND resource.labels.task_name=\"master-replica-0\""),
            "master-replica-0 2 line of trial 2; pages=1");
}

}  // namespace
}  // namespace trainyard::cloud_logging
