#include "spec/legacy_job_json.h"

#include <gtest/gtest.h>

namespace trainyard::spec {
namespace {

using nlohmann::json;

// What gcloud 528 sent for `submit training job_full` with every custom-container flag
// (shared/reference/legacy-and-pipelines.md §2.1), less enableWebAccess.
constexpr const char* kFullContainerJob = R"({"jobId":"job_full","labels":{"k":"v"},
 "trainingInput":{"args":["--a=1","b"],"enableWebAccess":false,"jobDir":"gs://bkt1/jobdir",
 "masterConfig":{"acceleratorConfig":{"count":"4","type":"NVIDIA_TESLA_V100"},"imageUri":"gcr.io/p1/t:1"},
 "masterType":"n1-highmem-8",
 "parameterServerConfig":{"imageUri":"gcr.io/p1/ps:1"},"parameterServerCount":"1","parameterServerType":"n1-standard-4",
 "region":"europe-west4","scaleTier":"CUSTOM","serviceAccount":"sa@p1.iam.gserviceaccount.com","useChiefInTfConfig":true,
 "workerConfig":{"acceleratorConfig":{"count":"1","type":"NVIDIA_TESLA_T4"},"imageUri":"gcr.io/p1/t:1"},
 "workerCount":"2","workerType":"n1-standard-8"}})";

// The hptuning.yaml of §2.3 as gcloud sent it, with snake_case keys as a YAML file may have them.
constexpr const char* kSnakeHpJob = R"({"job_id":"job_snake","training_input":{
 "scale_tier":"CUSTOM","master_type":"n1-standard-4","region":"us-central1",
 "master_config":{"image_uri":"img","accelerator_config":{"count":1,"type":"NVIDIA_TESLA_T4"}},
 "hyperparameters":{"goal":"MAXIMIZE","hyperparameter_metric_tag":"accuracy","max_trials":4,
  "max_parallel_trials":2,"max_failed_trials":1,"enable_trial_early_stopping":true,
  "algorithm":"RANDOM_SEARCH","params":[
   {"parameter_name":"learning-rate","type":"DOUBLE","min_value":0.0001,"max_value":0.1,"scale_type":"UNIT_LOG_SCALE"},
   {"parameter_name":"batch-size","type":"DISCRETE","discrete_values":[16.0,32.0,64.0]},
   {"parameter_name":"optimizer","type":"CATEGORICAL","categorical_values":["adam","sgd"]},
   {"parameter_name":"epochs","type":"INTEGER","min_value":1.0,"max_value":5.0}]},
 "scheduling":{"max_running_time":"7200s"}}})";

std::string Error(std::string_view body) {
  StatusOr<LegacyJob> job = ParseLegacyJobRequest(body);
  return job.ok() ? "ok" : job.status().message();
}

TEST(LegacyJobJsonTest, GcloudsFullContainerJobRoundTripsInCanonicalForm) {
  StatusOr<LegacyJob> job = ParseLegacyJobRequest(kFullContainerJob);
  ASSERT_TRUE(job.ok()) << job.status();
  const json encoded = TrainingInputToJson(job->training_input);
  StatusOr<TrainingInput> again = TrainingInputFromJson(encoded, "trainingInput");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(TrainingInputToJson(*again), encoded);
  json sent = json::parse(kFullContainerJob)["trainingInput"];
  sent.erase("enableWebAccess");  // false: the canonical form omits defaults
  EXPECT_EQ(encoded, sent);
}

TEST(LegacyJobJsonTest, SnakeCaseKeysDecodeLikeCamelCase) {
  StatusOr<LegacyJob> job = ParseLegacyJobRequest(kSnakeHpJob);
  ASSERT_TRUE(job.ok()) << job.status();
  const json encoded = TrainingInputToJson(job->training_input);
  StatusOr<TrainingInput> again = TrainingInputFromJson(encoded, "trainingInput");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(job->job_id + " " + TrainingInputToJson(*again).dump(), "job_snake " + encoded.dump());
  EXPECT_EQ(encoded["hyperparameters"].dump(),
            R"({"algorithm":"RANDOM_SEARCH","enableTrialEarlyStopping":true,"goal":"MAXIMIZE",)"
            R"("hyperparameterMetricTag":"accuracy","maxFailedTrials":1,"maxParallelTrials":2,)"
            R"("maxTrials":4,"params":[{"maxValue":0.1,"minValue":0.0001,)"
            R"("parameterName":"learning-rate","scaleType":"UNIT_LOG_SCALE","type":"DOUBLE"},)"
            R"({"discreteValues":[16.0,32.0,64.0],"parameterName":"batch-size","type":"DISCRETE"},)"
            R"({"categoricalValues":["adam","sgd"],"parameterName":"optimizer",)"
            R"("type":"CATEGORICAL"},{"maxValue":5.0,"minValue":1.0,"parameterName":"epochs",)"
            R"("type":"INTEGER"}]})");
}

TEST(LegacyJobJsonTest, BadEnumsUnknownFieldsAndTypesNameTheField) {
  EXPECT_EQ(Error(R"({"trainingInput":{"hyperparameters":{"goal":"MAXIMISE"}}})"),
            "Invalid value at 'trainingInput.hyperparameters.goal' "
            "(google.cloud.ml.v1.HyperparameterSpec.GoalType), \"MAXIMISE\": expected one of "
            "GOAL_TYPE_UNSPECIFIED, MAXIMIZE, MINIMIZE");
  EXPECT_EQ(Error(R"({"trainingInput":{"scaleTier":"HUGE"}})"),
            "Invalid value at 'trainingInput.scaleTier' "
            "(google.cloud.ml.v1.TrainingInput.ScaleTier), \"HUGE\": expected one of BASIC, "
            "STANDARD_1, PREMIUM_1, BASIC_GPU, BASIC_TPU, CUSTOM");
  EXPECT_EQ(
      Error(R"({"trainingInput":{"workerConfig":{"acceleratorConfig":{"type":"NVIDIA_L4"}}}})")
          .substr(0, 136),
      "Invalid value at 'trainingInput.workerConfig.acceleratorConfig.type' "
      "(google.cloud.ml.v1.AcceleratorConfig.AcceleratorType), \"NVIDIA_L4\"");
  EXPECT_EQ(Error(R"({"trainingInput":{"workerCnt":"2"}})"),
            "Invalid JSON payload received. Unknown name \"workerCnt\" at 'trainingInput': Cannot "
            "find field.");
  EXPECT_EQ(Error(R"({"trainingInput":{"workerCount":"two"}})"),
            "Invalid value at 'trainingInput.workerCount' (TYPE_INT64), \"two\"");
  EXPECT_EQ(Error(R"({"jobId":"a"})"), "trainingInput: required; the job's TrainingInput");
  EXPECT_EQ(Error(R"({"jobId":"a","predictionInput":{"dataFormat":"JSON"},"trainingInput":{}})"),
            "predictionInput: not supported by Trainyard; Trainyard serves training jobs; batch "
            "prediction is not served");
}

TEST(LegacyJobJsonTest, TheJobAsGcloudDecodesIt) {
  LegacyJob job;
  job.job_id = "j1";
  job.state = LegacyJobState::kSucceeded;
  job.create_time = Timestamp(std::chrono::seconds(1700000000));
  job.end_time = Timestamp(std::chrono::seconds(1700000060));
  job.etag = "AAAAAAAAAAE=";
  job.training_input.region = "us-central1";
  TrainingOutput out;
  out.is_hyperparameter_tuning_job = true;
  out.completed_trial_count = 1;
  out.hyperparameter_metric_tag = "accuracy";
  LegacyTrialOutput t;
  t.trial_id = "1";
  t.state = LegacyJobState::kSucceeded;
  t.hyperparameters = {{"lr", "0.01"}};
  t.final_training_step = 10;
  t.final_objective_value = 0.5;
  out.trials.push_back(t);
  job.training_output = out;
  EXPECT_EQ(
      LegacyJobToJson(job).dump(),
      R"({"createTime":"2023-11-14T22:13:20.000000Z","endTime":"2023-11-14T22:14:20.000000Z",)"
      R"("etag":"AAAAAAAAAAE=","jobId":"j1","state":"SUCCEEDED",)"
      R"("trainingInput":{"region":"us-central1"},"trainingOutput":{"completedTrialCount":"1",)"
      R"("consumedMLUnits":0.0,"hyperparameterMetricTag":"accuracy",)"
      R"("isHyperparameterTuningJob":true,"trials":[{"finalMetric":{"objectiveValue":0.5,)"
      R"("trainingStep":"10"},"hyperparameters":{"lr":"0.01"},"state":"SUCCEEDED",)"
      R"("trialId":"1"}]}})");
}

}  // namespace
}  // namespace trainyard::spec
