// Issue #46 item 5, "who did what": every resource created through the API records its creator
// (trainyardInfo.creator, spec/creator.h) — the caller's token, or {anonymous} without
// authentication — the jobs and models it starts inherit it, a client cannot forge it, it is
// stored with the resource, and the create's audit row names what was made.
#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/training_pipeline_controller.h"
#include "controller/tuning_job_controller.h"
// clang-format off
#include <gtest/gtest.h>
#include <httplib.h>
// clang-format on

#include <set>

#include "api/widget_resource_testing.h"
#include "executor/fake_executor.h"
#include "spec/custom_job_json.h"
#include "spec/hyperparameter_tuning_job_json.h"
#include "testing/test_util.h"

// A namespace of its own: the test files of api_test are compiled together (unity build).
namespace trainyard::api::issue46 {
namespace {

using nlohmann::json;

constexpr const char* kLoc = "/v1/projects/p/locations/us-central1";
constexpr const char* kPool = R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
    "containerSpec":{"imageUri":"local","command":["true"]}})";

// A custom job whose client tries to name its own creator (an output-only field: ignored).
std::string ForgedJob() {
  return R"({"displayName":"d","trainyardInfo":{"creator":{"tokenId":"forged"}},
    "jobSpec":{"workerPoolSpecs":[)" +
         std::string(kPool) + "]}}";
}
std::string TuningJob() {
  return R"({"displayName":"t","studySpec":{"metrics":[{"metricId":"m","goal":"MAXIMIZE"}],
      "parameters":[{"parameterId":"x","doubleValueSpec":{"minValue":0,"maxValue":1}}],
      "algorithm":"RANDOM_SEARCH"},"maxTrialCount":1,"parallelTrialCount":1,
    "trialJobSpec":{"workerPoolSpecs":[)" +
         std::string(kPool) + "]}}";
}
std::string Pipeline() {
  return R"({"displayName":"x","trainingTaskDefinition":
    "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml",
    "trainingTaskInputs":{"workerPoolSpecs":[)" +
         std::string(kPool) + R"(],
      "baseOutputDirectory":{"outputUriPrefix":"gs://bkt1/out"}},
    "modelToUpload":{"displayName":"x-model","containerSpec":{"imageUri":"SERV"}}})";
}
constexpr const char* kUpload =
    R"({"model":{"displayName":"m","artifactUri":"gs://bkt1/model/"},"modelId":"uploaded"})";
constexpr const char* kLegacyJob =
    R"({"jobId":"legacy1","trainingInput":{"region":"us-central1","scaleTier":"BASIC",
    "masterConfig":{"imageUri":"local","containerCommand":["true"]}}})";

class CreatorTest : public ::testing::Test {
 protected:
  json Call(TestApiServer& server, const std::string& method, const std::string& path,
            const std::string& body = "", const std::string& token = "") {
    httplib::Client c("127.0.0.1", server.port());
    c.set_default_headers({{"User-Agent", "creator-test/1"}});
    if (!token.empty()) c.set_bearer_token_auth(token);
    auto r = method == "POST" ? c.Post(path, body, "application/json") : c.Get(path);
    EXPECT_TRUE(r && r->status == 200)
        << method << " " << path << ": " << (r ? r->body : "no response");
    return r ? json::parse(r->body, nullptr, false) : json();
  }
  static std::string CreatorOf(const json& resource) {
    return resource.value("trainyardInfo", json::object()).value("creator", json()).dump();
  }
};

// Without --auth: each kind says {anonymous} and where the call came from; what a resource starts
// (trials, a pipeline's job and model, a legacy job's backing job) carries the same.
TEST_F(CreatorTest, EveryKindRecordsItsCreatorAndWhatItStartsInheritsIt) {
  TestApiServer server;
  const std::string loc = kLoc;
  const json job = Call(server, "POST", loc + "/customJobs", ForgedJob());
  const json study = Call(server, "POST", loc + "/hyperparameterTuningJobs", TuningJob());
  // The Python SDK's wire format (enum-encoding=int): its handler serves a copy of the request.
  const json pipeline = Call(
      server, "POST", loc + "/trainingPipelines?%24alt=json%3Benum-encoding%3Dint", Pipeline());
  const std::string backing = pipeline["trainingTaskMetadata"].value("backingCustomJob", "");
  ASSERT_TRUE(server.executor()
                  .Advance(backing.substr(backing.rfind('/') + 1), executor::GangState::kSucceeded)
                  .ok());
  server.pipelines().PollOnce();
  const json done = Call(server, "GET", "/v1/" + pipeline.value("name", ""));
  const json trained = Call(server, "GET", "/v1/" + done["modelToUpload"].value("name", ""));
  Call(server, "POST", loc + "/models:upload", kUpload);
  const json uploaded = Call(server, "GET", loc + "/models/uploaded");
  const json legacy = Call(server, "POST", "/v1/projects/p/jobs", kLegacyJob);
  std::string got;
  for (const json& r : {job, study, pipeline, trained, uploaded, legacy})
    got += CreatorOf(r) + "\n";
  // The job, the trial's, the pipeline's and the legacy job's backing job.
  std::set<std::string> job_creators;
  const json jobs = Call(server, "GET", loc + "/customJobs")["customJobs"];
  for (const json& j : jobs) job_creators.insert(CreatorOf(j));
  got += std::to_string(jobs.size()) + " jobs by";
  for (const std::string& c : job_creators) got += " " + c;
  const std::string anonymous = R"({"anonymous":true,"callerIp":"127.0.0.1"})";
  EXPECT_EQ(got, anonymous + "\n" + anonymous + "\n" + anonymous + "\n" + anonymous + "\n" +
                     anonymous + "\n" + anonymous + "\n4 jobs by " + anonymous);
}

// With tokens: the token's id, project, owner and description; the audit row of the create names
// the job it made, with the client's address and User-Agent.
TEST_F(CreatorTest, ATokensCallerIsRecordedAndTheAuditRowNamesTheJob) {
  const auto dir = testing::MakeTestDir();
  auto tokens = std::move(*auth::TokenStore::Open(dir / "auth.db"));
  auto audit = std::move(*auth::AuditLog::Open(dir / "auth.db"));
  const auto now = std::chrono::system_clock::now();
  auto made = tokens->Create({"p", auth::Role::kEditor, "CI", "ana@example.com", {}}, now);
  ASSERT_TRUE(made.ok()) << made.status();
  TestApiServer server(AuthOptions{tokens.get(), audit.get()});
  const json job =
      Call(server, "POST", std::string(kLoc) + "/customJobs", ForgedJob(), made->secret);
  Call(server, "POST", "/v1/projects/p/jobs", kLegacyJob, made->secret);  // its Job has no name
  auto rows = audit->Query({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::string audited;
  for (const auth::AuditEntry& row : *rows) {
    audited +=
        row.method + " " + row.resource + " " + row.remote_addr + " " + row.user_agent + "\n";
  }
  EXPECT_EQ(
      CreatorOf(job) + "\n" + audited,
      R"({"callerIp":"127.0.0.1","description":"CI","owner":"ana@example.com",)"
      R"("project":"p","tokenId":")" +
          made->info.id + "\"}\nPOST " + job.value("name", "") +
          " 127.0.0.1 creator-test/1\nPOST projects/p/jobs/legacy1 127.0.0.1 creator-test/1\n");
}

// The creator is part of what the stores keep (jobs.db holds these JSON forms; the other kinds
// keep their JSON as it is), so it reads back after a restart.
TEST(CreatorStoredTest, CustomAndTuningJobsKeepTheirCreatorInTheirStoredForm) {
  spec::Creator creator{false, "0123456789abcdef", "p", "ana", "CI", "10.0.0.7"};
  spec::CustomJob job;
  job.trainyard_info = spec::TrainyardInfo{};
  job.trainyard_info->creator = creator;
  spec::HyperparameterTuningJob study;
  study.creator = creator;
  auto job_back = spec::CustomJobFromJson(spec::CustomJobToJson(job), spec::DecodeMode::kStored);
  auto study_back = spec::HyperparameterTuningJobFromJson(
      spec::HyperparameterTuningJobToJson(study), spec::DecodeMode::kStored);
  auto study_request = spec::HyperparameterTuningJobFromJson(
      spec::HyperparameterTuningJobToJson(study), spec::DecodeMode::kRequest);
  ASSERT_TRUE(job_back.ok() && study_back.ok() && study_request.ok())
      << job_back.status() << study_back.status() << study_request.status();
  EXPECT_EQ(spec::CreatorToJson(*job_back->trainyard_info->creator).dump() + "\n" +
                spec::CreatorToJson(*study_back->creator).dump() + "\n" +
                std::to_string(study_request->creator.has_value()),
            R"({"callerIp":"10.0.0.7","description":"CI","owner":"ana","project":"p",)"
            R"("tokenId":"0123456789abcdef"})"
            "\n"
            R"({"callerIp":"10.0.0.7","description":"CI","owner":"ana","project":"p",)"
            R"("tokenId":"0123456789abcdef"})"
            "\n0");
}

}  // namespace
}  // namespace trainyard::api::issue46
