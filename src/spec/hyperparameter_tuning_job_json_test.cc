#include "spec/hyperparameter_tuning_job_json.h"

#include <gtest/gtest.h>

#include "spec/hyperparameter_tuning_job_validation.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;

json Request() {
  return json::parse(R"({
    "displayName": "lr-sweep",
    "labels": {"team": "nlp"},
    "studySpec": {
      "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
      "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1},
                      "scaleType": "UNIT_LOG_SCALE"}]},
    "maxTrialCount": 4, "parallelTrialCount": 2,
    "trialJobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"},
                     "replicaCount": "1", "containerSpec": {"imageUri": "local"}}]}})");
}

// The stored form carries the output-only fields; the request form ignores them.
TEST(HyperparameterTuningJobJsonTest, StoredFormRoundTripsAndRequestIgnoresOutputOnly) {
  json stored = Request();
  stored["name"] = "projects/p/locations/l/hyperparameterTuningJobs/7";
  stored["state"] = "JOB_STATE_RUNNING";
  stored["createTime"] = "2026-11-22T02:44:24.123456Z";
  stored["startTime"] = "2026-11-22T02:44:25Z";
  stored["error"] = {{"code", 9}, {"message", "m"}};
  stored["trials"] = json::parse(
      R"([{"id": "1", "state": "ACTIVE", "parameters": [{"parameterId": "lr", "value": 0.01}]}])");
  auto job = HyperparameterTuningJobFromJson(stored, DecodeMode::kStored);
  ASSERT_TRUE(job.ok()) << job.status();
  auto again =
      HyperparameterTuningJobFromJson(HyperparameterTuningJobToJson(*job), DecodeMode::kStored);
  ASSERT_TRUE(again.ok()) << again.status();
  auto request = HyperparameterTuningJobFromJson(stored, DecodeMode::kRequest);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(HyperparameterTuningJobToJson(*again).dump() + "\n" +
                HyperparameterTuningJobToJson(*request).dump(),
            HyperparameterTuningJobToJson(*job).dump() + "\n" +
                HyperparameterTuningJobToJson(
                    *HyperparameterTuningJobFromJson(Request(), DecodeMode::kRequest))
                    .dump());
  EXPECT_EQ(job->Id() + " " + std::string(JobStateName(job->state)) + " " +
                std::to_string(job->trials.size()) + " " + job->labels.at("team") + " " +
                job->trial_job_spec.worker_pool_specs[0].container_spec->image_uri,
            "7 JOB_STATE_RUNNING 1 nlp local");
}

TEST(HyperparameterTuningJobJsonTest, ErrorsNameTheFieldPath) {
  std::vector<json> bodies(4, Request());
  bodies[0]["maxTrialCont"] = 3;
  bodies[1]["trialJobSpec"]["workerPoolSpecs"][0]["replicaCount"] = "two";
  bodies[2]["labels"]["team"] = 1;
  bodies[3] = json::array();
  std::string got;
  for (const auto& b : bodies) {
    auto r = HyperparameterTuningJobFromJson(b, DecodeMode::kRequest);
    got += (r.ok() ? "OK" : r.status().message()) + "\n";
  }
  EXPECT_EQ(got,
            "Invalid JSON payload received. Unknown name \"maxTrialCont\" at "
            "'hyperparameterTuningJob': Cannot find field.\n"
            "Invalid value at 'trialJobSpec.workerPoolSpecs[0].replicaCount' (TYPE_INT64), "
            "\"two\"\n"
            "labels.team: expected a string, got 1\n"
            "the request body must be a HyperparameterTuningJob JSON object with displayName, "
            "studySpec, maxTrialCount, parallelTrialCount and trialJobSpec\n");
}

TEST(HyperparameterTuningJobValidationTest, ChecksStudyThenTrialJobSpecThenLabels) {
  std::vector<json> bodies(4, Request());
  bodies[0]["studySpec"]["parameters"][0]["doubleValueSpec"]["minValue"] = 0;
  bodies[1].erase("trialJobSpec");
  bodies[2]["labels"]["Team"] = "x";
  std::string got;
  for (const auto& b : bodies) {
    auto job = HyperparameterTuningJobFromJson(b, DecodeMode::kRequest);
    ASSERT_TRUE(job.ok()) << job.status();
    Status s = ValidateHyperparameterTuningJob(*job);
    got += (s.ok() ? "OK" : s.message().substr(0, s.message().find(':'))) + "\n";
  }
  EXPECT_EQ(got,
            "studySpec.parameters[0].doubleValueSpec.minValue\ntrialJobSpec\nlabels.Team\nOK\n");
}

}  // namespace
}  // namespace trainyard::spec
