#include "api/system_params.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

using nlohmann::json;

httplib::Request WithParams(std::initializer_list<std::pair<std::string, std::string>> params) {
  httplib::Request req;
  for (const auto& [k, v] : params) req.params.emplace(k, v);
  return req;
}

TEST(SystemParamsTest, AltAndPrettyPrint) {
  auto f = ParseSystemParams(
      WithParams({{"$alt", "json;enum-encoding=int"}, {"$prettyPrint", "false"}}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->enum_numbers);
  EXPECT_FALSE(f->pretty);
  EXPECT_FALSE(ParseSystemParams(WithParams({{"alt", "json"}}))->enum_numbers);
  EXPECT_FALSE(ParseSystemParams(WithParams({{"alt", "proto"}})).ok());
  EXPECT_FALSE(ParseSystemParams(WithParams({{"$alt", "json;enum-encoding=bits"}})).ok());
  EXPECT_FALSE(ParseSystemParams(WithParams({{"$bogus", "1"}})).ok());
  EXPECT_TRUE(ParseSystemParams(WithParams({{"$fields", "name"}, {"$.xgafv", "2"}})).ok());
}

TEST(SystemParamsTest, EnumsRoundTripAndLabelsStayAlone) {
  json job = json::parse(R"({"state":"JOB_STATE_RUNNING","labels":{"state":"JOB_STATE_RUNNING"},
    "jobSpec":{"workerPoolSpecs":[{"machineSpec":{"acceleratorType":"NVIDIA_TESLA_T4"}}],
    "scheduling":{"strategy":"SPOT"}},
    "studySpec":{"algorithm":"GRID_SEARCH","metrics":[{"goal":"MAXIMIZE"}],
    "parameters":[{"scaleType":"UNIT_LOG_SCALE"}]},"trials":[{"state":"SUCCEEDED"}]})");
  json numbers = job;
  EnumsToNumbers(numbers);
  EXPECT_EQ(
      numbers.dump(),
      R"({"jobSpec":{"scheduling":{"strategy":4},"workerPoolSpecs":[{"machineSpec":{"acceleratorType":5}}]},)"
      R"("labels":{"state":"JOB_STATE_RUNNING"},"state":3,"studySpec":{"algorithm":2,"metrics":[{"goal":1}],)"
      R"("parameters":[{"scaleType":2}]},"trials":[{"state":4}]})");
  ASSERT_TRUE(EnumsToNames(numbers).ok());
  EXPECT_EQ(numbers, job);
  json bad = {{"state", 99}};
  EXPECT_FALSE(EnumsToNames(bad).ok());
}

// A pipeline's own state becomes its number; its trainingTaskInputs (a google.protobuf.Value the
// SDKs read back key by key) is left exactly as sent, enum-like strings included.
TEST(SystemParamsTest, PipelineStatesAreNumberedAndTrainingTaskInputsStayAsSent) {
  json pipeline = json::parse(R"({"state":"PIPELINE_STATE_SUCCEEDED",
    "trainingTaskInputs":{"workerPoolSpecs":[{"machineSpec":{"acceleratorType":"NVIDIA_TESLA_T4"}}],
                          "scheduling":{"strategy":"SPOT"}},
    "trainingTaskMetadata":{"state":"JOB_STATE_RUNNING"}})");
  json numbers = pipeline;
  EnumsToNumbers(numbers);
  json list = {{"trainingPipelines", {pipeline}}};
  EnumsToNumbers(list);
  EXPECT_EQ(numbers["state"].dump() + " " + list["trainingPipelines"][0]["state"].dump() + " " +
                std::to_string(numbers["trainingTaskInputs"] == pipeline["trainingTaskInputs"]) +
                std::to_string(numbers["trainingTaskMetadata"] == pipeline["trainingTaskMetadata"]),
            "4 4 11");
}

// The tables come from the enums' owners (codecs, machine catalog): the newest accelerators,
// FLEX_START (6: the proto skips 5), the unspecified goal and every trial state map both ways.
TEST(SystemParamsTest, TablesComeFromTheEnumOwners) {
  json body = json::parse(R"({"jobSpec":{"workerPoolSpecs":[
    {"machineSpec":{"acceleratorType":"NVIDIA_B200"}},{"machineSpec":{"acceleratorType":"NVIDIA_GB200"}}],
    "scheduling":{"strategy":"FLEX_START"}},
    "studySpec":{"metrics":[{"goal":"GOAL_TYPE_UNSPECIFIED"}],"measurementSelectionType":"BEST_MEASUREMENT"},
    "trials":[{"state":"INFEASIBLE"}]})");
  json numbers = body;
  EnumsToNumbers(numbers);
  EXPECT_EQ(
      numbers.dump(),
      R"({"jobSpec":{"scheduling":{"strategy":6},"workerPoolSpecs":[{"machineSpec":{"acceleratorType":16}},)"
      R"({"machineSpec":{"acceleratorType":17}}]},"studySpec":{"measurementSelectionType":2,)"
      R"("metrics":[{"goal":0}]},"trials":[{"state":5}]})");
  ASSERT_TRUE(EnumsToNames(numbers).ok());
  EXPECT_EQ(numbers, body);
}

}  // namespace
}  // namespace trainyard::api
