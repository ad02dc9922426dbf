#include "spec/custom_job_validation.h"

#include <gtest/gtest.h>

#include "spec/custom_job_json.h"

namespace trainyard::spec {
namespace {

// Validates `job_json` and returns the error message ("" when valid).
std::string Check(const std::string& job_json) {
  auto job = ParseCustomJob(job_json, DecodeMode::kRequest);
  if (!job.ok()) return "decode: " + job.status().message();
  return ValidateCustomJob(*job).message();
}

constexpr const char* kPool0 =
    R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",)"
    R"("containerSpec":{"imageUri":"local","command":["true"]}})";

std::string Job(const std::string& pools, const std::string& extra = "") {
  return R"({"displayName":"j","jobSpec":{"workerPoolSpecs":[)" + pools + "]" + extra + "}}";
}

TEST(CustomJobValidationTest, AcceptsMinimalJobAndSkippedPools) {
  // Pool 1 is empty (skipped, as Vertex allows); pool 2 is a single parameter server.
  EXPECT_EQ(Check(Job(std::string(kPool0) + ",{}," + kPool0)), "");
}

struct Case {
  std::string json;
  std::string path;
};

TEST(CustomJobValidationTest, EveryInvalidCaseNamesItsField) {
  std::string p0 = kPool0;
  auto pool1 = [](const std::string& body) { return std::string(kPool0) + "," + body; };
  std::vector<Case> cases = {
      {R"({"jobSpec":{"workerPoolSpecs":[)" + p0 + "]}}", "displayName"},
      {R"({"displayName":"j","jobSpec":{}})", "jobSpec.workerPoolSpecs"},
      {Job("{}"), "jobSpec.workerPoolSpecs[0]"},
      {Job(p0 + "," + p0 + "," + p0 + "," + p0 + "," + p0), "jobSpec.workerPoolSpecs"},
      {Job(R"({"replicaCount":"1","containerSpec":{"imageUri":"local"}})"),
       "jobSpec.workerPoolSpecs[0].machineSpec.machineType"},
      {Job(R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"3",)"
           R"("containerSpec":{"imageUri":"local"}})"),
       "jobSpec.workerPoolSpecs[0].replicaCount"},
      {Job(pool1(R"({"machineSpec":{"machineType":"e2-standard-4"},"replicaCount":"0",)"
                 R"("containerSpec":{"imageUri":"x"}})")),
       "jobSpec.workerPoolSpecs[1].replicaCount"},
      {Job(pool1(R"({"machineSpec":{"machineType":"e2-standard-4"},"replicaCount":"2"})")),
       "jobSpec.workerPoolSpecs[1]"},
      {Job(pool1(
           R"({"machineSpec":{"machineType":"e2-standard-4","acceleratorType":"NVIDIA_TESLA_T4"},)"
           R"("replicaCount":"2","containerSpec":{"imageUri":"x"}})")),
       "jobSpec.workerPoolSpecs[1].machineSpec.acceleratorCount"},
      {Job(pool1(R"({"machineSpec":{"machineType":"e2-standard-4","acceleratorCount":2},)"
                 R"("replicaCount":"2","containerSpec":{"imageUri":"x"}})")),
       "jobSpec.workerPoolSpecs[1].machineSpec.acceleratorType"},
      {Job(pool1(R"({"machineSpec":{"machineType":"n9-huge"},"replicaCount":"1",)"
                 R"("containerSpec":{"imageUri":"x"}})")),
       "jobSpec.workerPoolSpecs[1].machineSpec.machineType"},
      {Job(pool1(R"({"machineSpec":{"machineType":"g2-standard-4","acceleratorType":"NVIDIA_L4",)"
                 R"("acceleratorCount":2},"replicaCount":"1","containerSpec":{"imageUri":"x"}})")),
       "jobSpec.workerPoolSpecs[1].machineSpec"},
      {Job(pool1(R"({"machineSpec":{"machineType":"e2-standard-4"},"replicaCount":"1",)"
                 R"("containerSpec":{"imageUri":""}})")),
       "jobSpec.workerPoolSpecs[1].containerSpec.imageUri"},
      {Job(pool1(R"({"machineSpec":{"machineType":"e2-standard-4"},"replicaCount":"1",)"
                 R"("containerSpec":{"imageUri":"x","env":[{"name":"1BAD","value":""}]}})")),
       "jobSpec.workerPoolSpecs[1].containerSpec.env[0].name"},
      {Job(pool1(R"({"machineSpec":{"machineType":"e2-standard-4"},"replicaCount":"1",)"
                 R"("pythonPackageSpec":{"executorImageUri":"x","pythonModule":"m"}})")),
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.packageUris"},
      {Job(pool1(R"({"machineSpec":{"machineType":"e2-standard-4"},"replicaCount":"1",)"
                 R"("containerSpec":{"imageUri":"x"},"diskSpec":{"bootDiskType":"floppy"}})")),
       "jobSpec.workerPoolSpecs[1].diskSpec.bootDiskType"},
      {Job(p0, R"(,"scheduling":{"timeout":"0s"})"), "jobSpec.scheduling.timeout"},
      {Job(p0, R"(,"scheduling":{"strategy":"CHEAP"})"), "jobSpec.scheduling.strategy"},
      {Job(p0, R"(,"baseOutputDirectory":{"outputUriPrefix":"relative/dir"})"),
       "jobSpec.baseOutputDirectory.outputUriPrefix"},
      {Job(p0, R"(,"enableWebAccess":true)"), "jobSpec.enableWebAccess"},
      {Job(p0, R"(,"tensorboard":"projects/p/locations/l/tensorboards/1")"), "jobSpec.tensorboard"},
      {Job(p0, R"(,"experiment":"projects/p/locations/l/metadataStores/default/contexts/e")"),
       "jobSpec.experiment"},
      {Job(p0, R"(,"experimentRun":"r")"), "jobSpec.experimentRun"},
      {R"({"displayName":"j","labels":{"Team":"x"},"jobSpec":{"workerPoolSpecs":[)" + p0 + "]}}",
       "labels.Team"},
  };
  std::string report;
  for (const auto& c : cases) {
    std::string msg = Check(c.json);
    if (!msg.starts_with(c.path + ": ")) report += "want " + c.path + ", got '" + msg + "'\n";
  }
  EXPECT_EQ(report, "");
}

}  // namespace
}  // namespace trainyard::spec
