#include "tuning/study_spec.h"

#include <gtest/gtest.h>

#include "tuning/study_spec_json.h"
#include "tuning/study_spec_validate.h"

namespace trainyard::tuning {
namespace {

using nlohmann::json;

json ValidJob() {
  return json::parse(R"({
    "displayName": "bert-lr",
    "maxTrialCount": 12, "parallelTrialCount": "3", "maxFailedTrialCount": 2,
    "studySpec": {
      "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
      "parameters": [
        {"parameterId": "learning_rate", "doubleValueSpec": {"minValue": 1e-5, "maxValue": 1e-3},
         "scaleType": "UNIT_LOG_SCALE"},
        {"parameterId": "batch_size", "integerValueSpec": {"minValue": "8", "maxValue": 64}},
        {"parameterId": "optimizer", "categoricalValueSpec": {"values": ["adam", "sgd"]},
         "conditionalParameterSpecs": [
           {"parentCategoricalValues": {"values": ["sgd"]},
            "parameterSpec": {"parameterId": "momentum",
                              "discreteValueSpec": {"values": [0.0, 0.9, 0.99]}}}]}
      ],
      "algorithm": "RANDOM_SEARCH",
      "measurementSelectionType": "BEST_MEASUREMENT",
      "medianAutomatedStoppingSpec": {"useElapsedDuration": false}
    },
    "trialJobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"}}]}
  })");
}

Status ParseAndValidate(const json& j) {
  StatusOr<HyperparameterTuningJobSpec> spec = ParseHyperparameterTuningJobSpec(j);
  if (!spec.ok()) return spec.status();
  return ValidateHyperparameterTuningJobSpec(*spec);
}

TEST(StudySpecJsonTest, ParsesVertexShapeAndRoundTrips) {
  StatusOr<HyperparameterTuningJobSpec> spec = ParseHyperparameterTuningJobSpec(ValidJob());
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(ValidateHyperparameterTuningJobSpec(*spec).ok());
  EXPECT_EQ(spec->parallel_trial_count, 3);
  EXPECT_EQ(spec->study_spec.parameters[1].int_min, 8);
  EXPECT_EQ(
      spec->study_spec.parameters[2].conditional_parameter_specs[0].parameter_spec.parameter_id,
      "momentum");
  EXPECT_TRUE(std::holds_alternative<MedianStoppingSpec>(spec->study_spec.automated_stopping));
  json once = ToJson(*spec);
  StatusOr<HyperparameterTuningJobSpec> again = ParseHyperparameterTuningJobSpec(once);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(ToJson(*again).dump(), once.dump());
  EXPECT_EQ(once["studySpec"]["parameters"][1]["integerValueSpec"]["minValue"], "8");
}

TEST(StudySpecJsonTest, AcceptsSnakeCaseNames) {
  json j = json::parse(R"({"metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
      "parameters": [{"parameter_id": "x", "double_value_spec": {"min_value": 0, "max_value": 1}}]})");
  StatusOr<StudySpec> s = ParseStudySpec(j);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->metrics[0].metric_id, "loss");
  EXPECT_EQ(s->parameters[0].max_value, 1.0);
}

TEST(StudySpecJsonTest, ErrorsNameTheField) {
  json typo = ValidJob();
  typo["studySpec"]["parameters"][0]["doubleValueSpec"]["minValu"] = 1;
  EXPECT_EQ(ParseAndValidate(typo).message(),
            "Invalid JSON payload received. Unknown name \"minValu\" at "
            "'studySpec.parameters[0].doubleValueSpec': Cannot find field.");

  json bad_type = ValidJob();
  bad_type["studySpec"]["parameters"][1]["integerValueSpec"]["maxValue"] = "lots";
  EXPECT_EQ(ParseAndValidate(bad_type).message(),
            "Invalid value at 'studySpec.parameters[1].integerValueSpec.maxValue' (TYPE_INT64), "
            "\"lots\"");

  json bad_enum = ValidJob();
  bad_enum["studySpec"]["algorithm"] = "HYPERBAND";
  EXPECT_EQ(
      ParseAndValidate(bad_enum).message(),
      "Invalid value at 'studySpec.algorithm' (google.cloud.aiplatform.v1.StudySpec.Algorithm), "
      "\"HYPERBAND\": expected one of ALGORITHM_UNSPECIFIED, GRID_SEARCH, RANDOM_SEARCH");

  json convex = ValidJob();
  convex["studySpec"].erase("medianAutomatedStoppingSpec");
  convex["studySpec"]["convexAutomatedStoppingSpec"] = {{"maxStepCount", "100"}};
  EXPECT_EQ(ParseAndValidate(convex).message(),
            "studySpec.convexAutomatedStoppingSpec: not supported by Trainyard; use "
            "medianAutomatedStoppingSpec or decayCurveStoppingSpec");
}

TEST(StudySpecJsonTest, AcceptsEnumNumbers) {
  json j = ValidJob();
  j["studySpec"]["algorithm"] = 2;
  j["studySpec"]["metrics"][0]["goal"] = 2;
  StatusOr<HyperparameterTuningJobSpec> spec = ParseHyperparameterTuningJobSpec(j);
  ASSERT_TRUE(spec.ok()) << spec.status();
  json out = ToJson(spec->study_spec);
  EXPECT_EQ(
      out["algorithm"].get<std::string>() + " " + out["metrics"][0]["goal"].get<std::string>(),
      "GRID_SEARCH MINIMIZE");
}

TEST(StudySpecValidateTest, RefusesBadSpecsWithPathsAndFixes) {
  struct Case {
    std::function<void(json&)> edit;
    std::string message;
  };
  std::vector<Case> cases = {
      {[](json& j) { j["studySpec"]["parameters"][0]["doubleValueSpec"]["minValue"] = 0; },
       "studySpec.parameters[0].doubleValueSpec.minValue: UNIT_LOG_SCALE needs minValue > 0, got "
       "0"},
      {[](json& j) { j["studySpec"]["parameters"][0]["doubleValueSpec"]["maxValue"] = 1e-6; },
       "studySpec.parameters[0].doubleValueSpec.minValue: must be < maxValue, got minValue=1e-05 "
       "maxValue=1e-06"},
      {[](json& j) { j["studySpec"]["algorithm"] = "GRID_SEARCH"; },
       "studySpec.parameters[0].doubleValueSpec: GRID_SEARCH cannot enumerate a continuous range; "
       "list the points with discreteValueSpec{values:[...]} or add doubleValueSpec.gridStep"},
      {[](json& j) {
         j["studySpec"]["parameters"][2]["conditionalParameterSpecs"][0]["parentCategoricalValues"]
          ["values"][0] = "rmsprop";
       },
       "studySpec.parameters[2].conditionalParameterSpecs[0].parentCategoricalValues.values[0]: "
       "\"rmsprop\" is not one of the parent's values"},
      {[](json& j) {
         j["studySpec"]["parameters"][2]["conditionalParameterSpecs"][0]["parameterSpec"]
          ["parameterId"] = "batch_size";
       },
       "studySpec.parameters[2].conditionalParameterSpecs[0].parameterSpec.parameterId: "
       "\"batch_size\" is used by another parameter; ids must be unique"},
      {[](json& j) { j["studySpec"]["parameters"][2]["scaleType"] = "UNIT_LINEAR_SCALE"; },
       "studySpec.parameters[2].scaleType: leave it unset for categorical parameters, got "
       "UNIT_LINEAR_SCALE"},
      {[](json& j) { j["maxTrialCount"] = 0; }, "maxTrialCount: required, must be >= 1, got 0"},
      {[](json& j) {
         j["studySpec"]["metrics"].push_back({{"metricId", "f1"}, {"goal", "MAXIMIZE"}});
       },
       "studySpec.metrics: trainyard optimises a single metric, got 2; keep the one to optimise "
       "(others can still be reported)"},
  };
  for (const Case& c : cases) {
    json j = ValidJob();
    c.edit(j);
    EXPECT_EQ(ParseAndValidate(j).message(), c.message);
  }
}

TEST(StudySpecValidateTest, GridAcceptsSteppedDoubles) {
  json j = ValidJob();
  j["studySpec"]["algorithm"] = "GRID_SEARCH";
  j["studySpec"]["parameters"][0]["doubleValueSpec"]["gridStep"] = 1e-4;
  EXPECT_TRUE(ParseAndValidate(j).ok()) << ParseAndValidate(j);
}

TEST(TrialJsonTest, RoundTripsWithTimesAndMeasurements) {
  Trial t;
  t.id = "7";
  t.state = TrialState::kSucceeded;
  t.parameters = {{"lr", 0.001}, {"units", int64_t{32}}, {"opt", std::string("adam")}};
  Measurement m;
  m.step_count = 100;
  m.elapsed_seconds = 12.5;
  m.metrics = {{"accuracy", 0.91}};
  t.measurements = {m};
  t.final_measurement = m;
  t.start_time = std::chrono::system_clock::time_point(std::chrono::microseconds(1763779464123456));
  t.end_time = *t.start_time + std::chrono::seconds(90);
  t.early_stopped = true;
  json j = ToJson(t);
  EXPECT_EQ(j["startTime"], "2025-11-22T02:44:24.123456Z");
  EXPECT_EQ(j["finalMeasurement"]["elapsedDuration"], "12.5s");
  StatusOr<Trial> back = ParseTrial(j, "trial");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ToJson(*back).dump(), j.dump());
  EXPECT_EQ(back->parameters, t.parameters);
}

TEST(TrialJsonTest, AcceptsTimestampOffsetsAndRefusesNegativeDurations) {
  json j = {{"id", "1"}, {"state", 4}, {"startTime", "2025-11-22T04:44:24+02:00"}};
  StatusOr<Trial> t = ParseTrial(j, "trial");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(
      ToJson(*t)["startTime"].get<std::string>() + " " + ToJson(*t)["state"].get<std::string>(),
      "2025-11-22T02:44:24.000000Z SUCCEEDED");
  j["measurements"] = {{{"elapsedDuration", "-1s"}}};
  EXPECT_EQ(ParseTrial(j, "trial").status().message(),
            "Invalid value at 'trial.measurements[0].elapsedDuration' (google.protobuf.Duration), "
            "\"-1s\": must not be negative");
}

}  // namespace
}  // namespace trainyard::tuning
