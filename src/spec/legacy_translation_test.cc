#include "spec/legacy_translation.h"

#include <gtest/gtest.h>

#include "spec/custom_job_json.h"
#include "spec/legacy_job_json.h"
#include "spec/legacy_machines.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;

// The backing job's spec for a trainingInput given as JSON, or the error.
std::string Translate(const std::string& training_input) {
  StatusOr<LegacyJob> job =
      ParseLegacyJobRequest(R"({"jobId":"j","trainingInput":)" + training_input + "}");
  if (!job.ok()) return job.status().message();
  StatusOr<LegacyBacking> backing = TranslateTrainingInput(job->training_input);
  if (!backing.ok()) return backing.status().message();
  return CustomJobSpecToJson(backing->job_spec).dump();
}

// One line per pool: "machine accelerator x count | replicas | image/module args".
std::string Pools(const std::string& training_input) {
  const json spec = json::parse(Translate(training_input), nullptr, false);
  if (!spec.is_object()) return Translate(training_input);
  std::string out;
  for (const auto& p : spec["workerPoolSpecs"]) {
    if (!p.contains("machineSpec")) {
      out += "(empty)\n";
      continue;
    }
    const json& m = p["machineSpec"];
    out += m.value("machineType", "") + " " + m.value("acceleratorType", "-") + "x" +
           std::to_string(m.value("acceleratorCount", 0)) + " | " + p.value("replicaCount", "0") +
           " | ";
    if (p.contains("containerSpec")) {
      out += p["containerSpec"].value("imageUri", "") + " " +
             p["containerSpec"].value("args", json::array()).dump();
    } else {
      const json& py = p["pythonPackageSpec"];
      out += py.value("executorImageUri", "") + " -m " + py.value("pythonModule", "") + " " +
             py.value("args", json::array()).dump();
    }
    out += "\n";
  }
  return out + "tf_config=" + spec.value("trainyardTfConfigPrimaryRole", "chief");
}

TEST(LegacyTranslationTest, TheArticlesContainerCommandIsOnePoolWithTwoT4s) {
  EXPECT_EQ(Pools(R"({"args":["--epochs=3","--lr=0.01"],"enableWebAccess":false,
    "masterConfig":{"acceleratorConfig":{"count":"2","type":"NVIDIA_TESLA_T4"},
                    "imageUri":"gcr.io/p1/trainer:latest"},
    "masterType":"n1-standard-4","region":"us-central1","scaleTier":"CUSTOM"})"),
            "n1-standard-4 NVIDIA_TESLA_T4x2 | 1 | gcr.io/p1/trainer:latest "
            "[\"--epochs=3\",\"--lr=0.01\"]\ntf_config=master");
}

TEST(LegacyTranslationTest, PoolsFollowMasterWorkerPsEvaluatorAndInheritTheMasterImage) {
  EXPECT_EQ(
      Pools(R"({"scaleTier":"CUSTOM","region":"us-east1","masterType":"complex_model_m",
    "masterConfig":{"imageUri":"img:1","containerArgs":["--role=x"]},
    "workerType":"standard_gpu","workerCount":"2",
    "parameterServerType":"n1-standard-4","parameterServerCount":1,
    "parameterServerConfig":{"imageUri":"ps:1"},"evaluatorType":"large_model","evaluatorCount":"1",
    "jobDir":"gs://b/out","useChiefInTfConfig":true})"),
      "n1-highcpu-16 -x0 | 1 | img:1 [\"--role=x\",\"--job-dir=gs://b/out\"]\n"
      "n1-standard-8 NVIDIA_TESLA_K80x1 | 2 | img:1 [\"--role=x\",\"--job-dir=gs://b/out\"]\n"
      "n1-standard-4 -x0 | 1 | ps:1 [\"--job-dir=gs://b/out\"]\n"
      "n1-highmem-8 -x0 | 1 | img:1 [\"--role=x\",\"--job-dir=gs://b/out\"]\ntf_config=chief");
}

TEST(LegacyTranslationTest, ScaleTiersAreGooglesPresets) {
  const std::string pkg =
      R"("packageUris":["gs://b/t.tar.gz"],"pythonModule":"trainer.task","region":"us-east1",)"
      R"("runtimeVersion":"2.11","pythonVersion":"3.7")";
  const std::string cpu = "us-docker.pkg.dev/vertex-ai/training/pytorch-xla.1-13.py310:latest";
  const std::string gpu = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.1-13.py310:latest";
  EXPECT_EQ(Pools("{" + pkg + R"(,"scaleTier":"BASIC"})"),
            "n1-standard-4 -x0 | 1 | " + cpu + " -m trainer.task []\ntf_config=chief");
  EXPECT_EQ(Pools("{" + pkg + "}"), Pools("{" + pkg + R"(,"scaleTier":"BASIC"})"));
  EXPECT_EQ(Pools("{" + pkg + R"(,"scaleTier":"BASIC_GPU"})"),
            "n1-standard-8 NVIDIA_TESLA_K80x1 | 1 | " + gpu +
                " -m trainer.task []\n"
                "tf_config=chief");
  EXPECT_EQ(Pools("{" + pkg + R"(,"scaleTier":"STANDARD_1","runtimeVersion":"1.15"})"),
            "n1-highcpu-8 -x0 | 1 | " + cpu + " -m trainer.task []\nn1-highcpu-8 -x0 | 4 | " + cpu +
                " -m trainer.task []\nn1-standard-4 -x0 | 3 | " + cpu +
                " -m trainer.task []\ntf_config=master");
  const std::string task = cpu + " -m trainer.task []\n";
  EXPECT_EQ(Pools("{" + pkg + R"(,"scaleTier":"PREMIUM_1"})"),
            "n1-highcpu-16 -x0 | 1 | " + task + "n1-highcpu-16 -x0 | 19 | " + task +
                "n1-highmem-8 -x0 | 11 | " + task + "tf_config=chief");
}

TEST(LegacyTranslationTest, WhatTrainyardCannotRunIsA400NamingTheField) {
  const std::string pkg =
      R"("packageUris":["gs://b/t.tar.gz"],"pythonModule":"m","region":"us-east1","runtimeVersion":"2.11")";
  std::string got;
  for (const std::string& input : {
           "{" + pkg + R"(,"scaleTier":"BASIC_TPU"})",
           "{" + pkg + R"(,"scaleTier":"CUSTOM","masterType":"cloud_tpu"})",
           "{" + pkg + R"(,"scaleTier":"CUSTOM","masterType":"n1-standard-4",)" +
               R"("masterConfig":{"acceleratorConfig":{"count":8,"type":"TPU_V3"}}})",
           "{" + pkg + R"(,"scaleTier":"CUSTOM"})",
           "{" + pkg + R"(,"scaleTier":"CUSTOM","masterType":"n1-standard-4","workerCount":2})",
           "{" + pkg + R"(,"masterType":"n1-standard-4"})",
           "{" + pkg + R"(,"scaleTier":"CUSTOM","masterType":"standard_gpu",)" +
               R"("masterConfig":{"acceleratorConfig":{"count":1,"type":"NVIDIA_TESLA_T4"}}})",
           std::string(R"({"region":"us-east1"})"),
           std::string(
               R"({"region":"us-east1","packageUris":["gs://b/t.tar.gz"],"pythonModule":"m",)"
               R"("runtimeVersion":"3.0"})"),
           std::string(R"({"packageUris":["gs://b/t.tar.gz"],"pythonModule":"m"})"),
           std::string(R"({"packageUris":["gs://b/t.tar.gz"],"pythonModule":"m",)"
                       R"("region":"us-centrall"})"),
           "{" + pkg + R"(,"enableWebAccess":true})",
       }) {
    const std::string error = Translate(input);
    got += error.substr(0, error.find(':')) + "\n";
  }
  EXPECT_EQ(got,
            "trainingInput.scaleTier\ntrainingInput.masterType\n"
            "trainingInput.masterConfig.acceleratorConfig.type\ntrainingInput.masterType\n"
            "trainingInput.workerType\ntrainingInput.masterType\n"
            "trainingInput.masterConfig.acceleratorConfig\ntrainingInput.packageUris\n"
            "trainingInput.runtimeVersion\ntrainingInput.region\ntrainingInput.region\n"
            "trainingInput.enableWebAccess\n");
  EXPECT_NE(Translate(R"({"packageUris":["gs://b/t.tar.gz"],"pythonModule":"m",)"
                      R"("region":"us-centrall"})")
                .find("did you mean 'us-central1'?"),
            std::string::npos);
}

TEST(LegacyTranslationTest, HyperparametersBecomeAStudyOnTheSameJobSpec) {
  StatusOr<LegacyJob> job = ParseLegacyJobRequest(R"({"trainingInput":{
    "region":"us-east1","masterConfig":{"imageUri":"img"},"args":["--epochs=3"],
    "scheduling":{"maxRunningTime":"7200s"},
    "hyperparameters":{"goal":"MINIMIZE","maxTrials":4,"maxParallelTrials":2,
      "enableTrialEarlyStopping":true,"algorithm":"GRID_SEARCH","params":[
      {"parameterName":"epochs","type":"INTEGER","minValue":1.0,"maxValue":5.0},
      {"parameterName":"opt","type":"CATEGORICAL","categoricalValues":["adam","sgd"]}]}}})");
  ASSERT_TRUE(job.ok()) << job.status();
  StatusOr<LegacyBacking> b = TranslateTrainingInput(job->training_input);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(b->tuning.has_value());
  const HyperparameterTuningJob& t = *b->tuning;
  const tuning::StudySpec& s = t.study_spec;
  EXPECT_EQ(s.metrics[0].metric_id + " " + std::string(tuning::GoalName(s.metrics[0].goal)) + " " +
                std::string(tuning::AlgorithmName(s.algorithm)) + " " +
                s.parameters[0].parameter_id + "=" + std::to_string(s.parameters[0].int_min) +
                ".." + std::to_string(s.parameters[0].int_max) + " " +
                s.parameters[1].categorical_values[1] + " " + std::to_string(t.max_trial_count) +
                "/" + std::to_string(t.parallel_trial_count) +
                " median=" + std::to_string(s.automated_stopping.index() == 1) +
                " timeout=" + std::to_string(t.trial_job_spec.scheduling->timeout->count()),
            "training/hptuning/metric MINIMIZE GRID_SEARCH epochs=1..5 sgd 4/2 median=1 "
            "timeout=7200000");
}

// Issue 43 item 5: maxTrials -1 silently became 1 trial.
TEST(LegacyTranslationTest, NegativeTrialCountsAreA400NamingTheField) {
  std::string got;
  for (const char* field : {"maxTrials", "maxParallelTrials", "maxFailedTrials"}) {
    got += Translate(std::string(R"({"region":"us-east1","masterConfig":{"imageUri":"img"},
      "hyperparameters":{"goal":"MAXIMIZE",")") +
                     field + R"(":-1,"params":[
      {"parameterName":"lr","type":"DISCRETE","discreteValues":[0.5]}]}})") +
           "\n";
  }
  EXPECT_EQ(got,
            "trainingInput.hyperparameters.maxTrials: must be >= 0 (0 or unset takes the "
            "default), got -1\n"
            "trainingInput.hyperparameters.maxParallelTrials: must be >= 0 (0 or unset takes the "
            "default), got -1\n"
            "trainingInput.hyperparameters.maxFailedTrials: must be >= 0 (0 or unset takes the "
            "default), got -1\n");
}

TEST(LegacyTranslationTest, TrialsBecomeTrainingOutputWithStringHyperparameters) {
  HyperparameterTuningJob t;
  t.study_spec.metrics.push_back({"accuracy", tuning::Goal::kMaximize});
  tuning::Trial done;
  done.id = "1";
  done.state = tuning::TrialState::kSucceeded;
  done.parameters = {{"lr", 0.001}, {"batch", int64_t{32}}, {"opt", std::string("adam")}};
  done.final_measurement = tuning::Measurement{std::nullopt, 12, {{"accuracy", 0.875}}};
  tuning::Trial failed;
  failed.id = "2";
  failed.state = tuning::TrialState::kInfeasible;
  failed.job_failed = true;
  t.trials = {done, failed};
  EXPECT_EQ(TrainingOutputToJson(TrainingOutputOf(t)).dump(),
            R"({"completedTrialCount":"1","consumedMLUnits":0.0,)"
            R"("hyperparameterMetricTag":"accuracy","isHyperparameterTuningJob":true,)"
            R"("trials":[{"finalMetric":{"objectiveValue":0.875,"trainingStep":"12"},)"
            R"("hyperparameters":{"batch":"32","lr":"0.001","opt":"adam"},"state":"SUCCEEDED",)"
            R"("trialId":"1"},{"state":"FAILED","trialId":"2"}]})");
}

TEST(LegacyTranslationTest, TaskNamesAndMachinesAsAiPlatformNamesThem) {
  EXPECT_EQ(LegacyTaskName(0, 0) + " " + LegacyTaskName(1, 2) + " " + LegacyTaskName(2, 0) + " " +
                LegacyTaskName(3, 0),
            "master-replica-0 worker-replica-2 ps-replica-0 evaluator-replica-0");
  EXPECT_EQ(LegacyMachineType("complex_model_l_gpu")->machine_type + " " +
                std::to_string(LegacyMachineType("complex_model_l_gpu")->accelerator_count) + " " +
                std::to_string(LegacyMachineType("n1-standard-4").has_value()),
            "n1-standard-32 8 0");
}

}  // namespace
}  // namespace trainyard::spec
