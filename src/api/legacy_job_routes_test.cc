// What AI Platform's jobs API answers beyond the route conformance suite (resource_routes_test.cc
// runs it over "jobs" too): gcloud's duplicate wording, hostile input on the new routes, paging.
#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/tuning_job_controller.h"
// clang-format off
#include <httplib.h>
// clang-format on

#include <gtest/gtest.h>

#include "api/widget_resource_testing.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kLegacyJobs = "/v1/projects/p1/jobs";

std::string JobBody(const std::string& job_id, const std::string& extra = "") {
  return R"({"jobId":")" + job_id +
         R"(","trainingInput":{"region":"us-central1","scaleTier":"BASIC",)"
         R"("masterConfig":{"imageUri":"local","containerCommand":["true"]})" +
         extra + "}}";
}

class LegacyJobRoutesTest : public ::testing::Test {
 protected:
  std::pair<int, json> Call(const std::string& method, const std::string& path,
                            const std::string& body = "") {
    httplib::Client client("127.0.0.1", server_.port());
    httplib::Result r =
        method == "POST" ? client.Post(path, body, "application/json") : client.Get(path);
    if (!r) return {-1, json()};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  // "<status> <field of the first violation or the error status>".
  std::string Outcome(const std::string& body) {
    auto [status, answer] = Call("POST", std::string(kLegacyJobs) + "?alt=json", body);
    const json& error = answer.is_object() ? answer.value("error", json::object()) : json();
    const json details = error.is_object() ? error.value("details", json::array()) : json();
    std::string what = error.is_object() ? error.value("status", "") : "";
    if (!details.empty()) what = details[0]["fieldViolations"][0].value("field", "");
    return std::to_string(status) + " " + what;
  }

  TestApiServer server_;
};

TEST_F(LegacyJobRoutesTest, ADuplicateJobIdIs409WithAiPlatformsMessage) {
  auto [s1, created] = Call("POST", kLegacyJobs, JobBody("job_20260101_1"));
  auto [s2, duplicate] = Call("POST", kLegacyJobs, JobBody("job_20260101_1"));
  EXPECT_EQ(std::to_string(s1) + " " + created.value("state", "") + " " + std::to_string(s2) + " " +
                duplicate["error"].value("status", "") + " " +
                duplicate["error"].value("message", ""),
            "200 QUEUED 409 ALREADY_EXISTS Field: job.job_id Error: A job with this id already "
            "exists.");
}

TEST_F(LegacyJobRoutesTest, HostileInputIsAClear4xxStoresNothingAndTheServerKeepsServing) {
  std::string got;
  for (const std::string& body : {
           JobBody("a/../b"),
           JobBody(".."),
           JobBody("x\xff\xfe"),
           std::string(100000, '['),
           JobBody("g1", R"(,"hyperparameters":{"goal":"MAXIMISE"})"),
           JobBody("g2", R"(,"scheduling":{"maxRunningTime":"forever"})"),
           JobBody("g3", R"(,"workerCount":"-1","scaleTier":"CUSTOM","masterType":"n1")"),
           std::string(R"({"jobId":"g4"})"),
           std::string(
               R"({"jobId":"g5","trainingInput":{"region":"us-east1","scaleTier":"BASIC_TPU",)"
               R"("masterConfig":{"imageUri":"local"}}})"),
       }) {
    got += Outcome(body) + "\n";
  }
  auto [list_status, list] = Call("GET", kLegacyJobs);
  auto [health, ok] = Call("GET", "/healthz");
  EXPECT_EQ(got + std::to_string(list_status) + " " +
                std::to_string(list.value("jobs", json::array()).size()) + " " +
                std::to_string(health),
            "400 jobId\n400 jobId\n400 INVALID_ARGUMENT\n400 INVALID_ARGUMENT\n"
            "400 trainingInput.hyperparameters.goal\n400 trainingInput.scheduling.maxRunningTime\n"
            "400 trainingInput.workerCount\n400 trainingInput\n400 trainingInput.scaleTier\n"
            "200 0 200");
}

// Issue 43: an HP job whose trials could never start (an image without a command) hung the
// server; oversized budgets and a negative maxTrials were taken. Both create paths — AI
// Platform's jobs and Vertex's hyperparameterTuningJobs — refuse them with a 400 naming the field.
TEST_F(LegacyJobRoutesTest, HpJobsThatCannotRunAre400sNamingTheFieldOnBothRoutes) {
  const std::string hp_params =
      R"("params":[{"parameterName":"lr","type":"DISCRETE","discreteValues":[0.5]}])";
  auto legacy = [&](const std::string& id, const std::string& master, const std::string& hp) {
    return R"({"jobId":")" + id +
           R"(","trainingInput":{"region":"us-central1",)"
           R"("scaleTier":"BASIC","masterConfig":)" +
           master + R"(,"hyperparameters":{"goal":"MAXIMIZE",)" + hp + hp_params + "}}}";
  };
  const std::string runnable = R"({"imageUri":"local","containerCommand":["true"]})";
  auto vertex = [&](const std::string& counts, const std::string& container) {
    return R"({"displayName":"t","studySpec":{"metrics":[{"metricId":"m","goal":"MAXIMIZE"}],
      "parameters":[{"parameterId":"x","doubleValueSpec":{"minValue":0,"maxValue":1}}]},)" +
           counts + R"(,"trialJobSpec":{"workerPoolSpecs":[{"machineSpec":{"machineType":
      "n1-standard-4"},"replicaCount":"1","containerSpec":)" +
           container + "}]}}";
  };
  std::string got;
  got += Outcome(legacy("h1", R"({"imageUri":"local"})", R"("maxTrials":2,)")) + "\n";
  got += Outcome(legacy("h2", runnable, R"("maxTrials":100000000,)")) + "\n";
  got += Outcome(legacy("h3", runnable, R"("maxTrials":-1,)")) + "\n";
  got += Outcome(legacy("h4", runnable, R"("maxTrials":2,"maxFailedTrials":3,)")) + "\n";
  got += Outcome(legacy("h5", runnable, R"("maxTrials":2,)")) + "\n";
  auto post = [&](const std::string& body) {
    auto [status, answer] =
        Call("POST", "/v1/projects/p1/locations/us-central1/hyperparameterTuningJobs", body);
    const json details = answer["error"].value("details", json::array());
    return std::to_string(status) + " " +
           (details.empty() ? answer.value("state", "")
                            : details[0]["fieldViolations"][0].value("field", ""));
  };
  got +=
      post(vertex(R"("maxTrialCount":2,"parallelTrialCount":1)", R"({"imageUri":"local"})")) + "\n";
  got += post(vertex(R"("maxTrialCount":1001,"parallelTrialCount":1)",
                     R"({"imageUri":"local","command":["true"]})")) +
         "\n";
  got += post(vertex(R"("maxTrialCount":2,"parallelTrialCount":3)",
                     R"({"imageUri":"local","command":["true"]})")) +
         "\n";
  EXPECT_EQ(got,
            "400 trainingInput.masterConfig.containerCommand\n"
            "400 trainingInput.hyperparameters.maxTrials\n"
            "400 trainingInput.hyperparameters.maxTrials\n"
            "400 trainingInput.hyperparameters.maxFailedTrials\n"
            "200 \n"
            "400 trialJobSpec.workerPoolSpecs[0].containerSpec.command\n"
            "400 maxTrialCount\n"
            "400 parallelTrialCount\n");
}

TEST_F(LegacyJobRoutesTest, ListPagesUnderTheJobsKeyAndGetAnswersTheJob) {
  for (const char* id : {"a1", "a2", "a3"})
    ASSERT_EQ(Call("POST", kLegacyJobs, JobBody(id)).first, 200);
  auto [s1, first] = Call("GET", std::string(kLegacyJobs) + "?pageSize=2");
  auto [s2, second] = Call("GET", std::string(kLegacyJobs) +
                                      "?pageSize=2&pageToken=" + first.value("nextPageToken", ""));
  auto [s3, got] = Call("GET", std::string(kLegacyJobs) + "/a2?alt=json");
  auto [s4, missing] = Call("GET", std::string(kLegacyJobs) + "/nojob");
  std::string ids;
  for (const json& page : {first, second}) {
    for (const auto& j : page.value("jobs", json::array())) ids += j.value("jobId", "") + " ";
  }
  EXPECT_EQ(std::to_string(s1) + std::to_string(s2) + " " + ids + "| " + std::to_string(s3) + " " +
                got.value("jobId", "") + " " + std::to_string(got.contains("name")) + " " +
                std::to_string(got.value("etag", "").size()) + " | " + std::to_string(s4),
            "200200 a3 a2 a1 | 200 a2 0 16 | 404");
}

}  // namespace
}  // namespace trainyard::api
