#include "spec/custom_job_json.h"

#include <gtest/gtest.h>

namespace trainyard::spec {
namespace {

constexpr const char* kJob = R"({
  "displayName": "pytorch_bert_training",
  "labels": {"team": "nlp"},
  "jobSpec": {
    "workerPoolSpecs": [{
      "machineSpec": {"machineType": "n1-standard-4", "acceleratorType": "NVIDIA_TESLA_T4",
                      "acceleratorCount": 1},
      "replicaCount": "1",
      "containerSpec": {"imageUri": "trainyard/bert-sentiment", "args": ["--epochs=1"],
                        "env": [{"name": "A", "value": "b"}]}
    }],
    "scheduling": {"timeout": "3600s", "disableRetries": true},
    "baseOutputDirectory": {"outputUriPrefix": "gs://bucket/out"}
  }
})";

TEST(CustomJobJsonTest, RoundTripsRequestFields) {
  auto job = ParseCustomJob(kJob, DecodeMode::kRequest);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(CustomJobToJson(*job).dump(),
            R"({"displayName":"pytorch_bert_training","jobSpec":{"baseOutputDirectory":)"
            R"({"outputUriPrefix":"gs://bucket/out"},"scheduling":{"disableRetries":true,)"
            R"("timeout":"3600s"},"workerPoolSpecs":[{"containerSpec":{"args":["--epochs=1"],)"
            R"("env":[{"name":"A","value":"b"}],"imageUri":"trainyard/bert-sentiment"},)"
            R"("machineSpec":{"acceleratorCount":1,"acceleratorType":"NVIDIA_TESLA_T4",)"
            R"("machineType":"n1-standard-4"},"replicaCount":"1"}]},"labels":{"team":"nlp"}})");
}

TEST(CustomJobJsonTest, AcceptsSnakeCaseAndNumbersForInt64) {
  auto job = ParseCustomJob(
      R"({"display_name":"x","job_spec":{"worker_pool_specs":[{"replica_count":2}]}})",
      DecodeMode::kRequest);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(
      job->display_name + "/" + std::to_string(job->job_spec.worker_pool_specs[0].replica_count),
      "x/2");
}

TEST(CustomJobJsonTest, RejectsUnknownFieldWithPath) {
  auto job =
      ParseCustomJob(R"({"displayName":"x","jobSpec":{"workerPoolSpecs":[{},{"replicaCnt":2}]}})",
                     DecodeMode::kRequest);
  EXPECT_EQ(job.status().message(),
            "Invalid JSON payload received. Unknown name \"replicaCnt\" at "
            "'jobSpec.workerPoolSpecs[1]': Cannot find field.");
}

TEST(CustomJobJsonTest, RejectsWrongTypeWithPath) {
  auto job = ParseCustomJob(
      R"({"displayName":"x","jobSpec":{"workerPoolSpecs":[{},{"replicaCount":"two"}]}})",
      DecodeMode::kRequest);
  EXPECT_EQ(job.status().message(),
            "Invalid value at 'jobSpec.workerPoolSpecs[1].replicaCount' (TYPE_INT64), \"two\"");
}

TEST(CustomJobJsonTest, RejectsMalformedJson) {
  auto job = ParseCustomJob(R"({"displayName": )", DecodeMode::kRequest);
  EXPECT_NE(job.status().message().find("Invalid JSON payload received."), std::string::npos)
      << job.status();
}

TEST(CustomJobJsonTest, IgnoresOutputOnlyFieldsInRequests) {
  auto job = ParseCustomJob(R"({"displayName":"x","name":"projects/p/locations/l/customJobs/1",
                                "state":"JOB_STATE_RUNNING","createTime":"bogus"})",
                            DecodeMode::kRequest);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->name + std::string(JobStateName(job->state)), "JOB_STATE_UNSPECIFIED");
}

TEST(CustomJobJsonTest, StoredModeKeepsOutputFields) {
  CustomJob job;
  job.name = "projects/p/locations/l/customJobs/42";
  job.display_name = "d";
  job.state = JobState::kFailed;
  job.create_time =
      std::chrono::system_clock::time_point(std::chrono::microseconds(1700000000123456));
  job.error = RpcStatus{13, "boom"};
  job.trainyard_info = TrainyardInfo{0.64, 0.01, {{0, 0, 2, 1}}};
  auto back = CustomJobFromJson(CustomJobToJson(job), DecodeMode::kStored);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(CustomJobToJson(*back).dump(), CustomJobToJson(job).dump());
  EXPECT_EQ(back->Id(), "42");
}

}  // namespace
}  // namespace trainyard::spec
