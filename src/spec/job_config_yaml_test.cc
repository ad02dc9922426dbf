#include "spec/job_config_yaml.h"

#include <gtest/gtest.h>

#include "spec/custom_job_json.h"

namespace trainyard::spec {
namespace {

TEST(JobConfigYamlTest, ParsesGcloudStyleConfig) {
  auto spec = ParseJobConfigYaml(R"(
workerPoolSpecs:
  - machineSpec:
      machineType: n1-standard-4
    replicaCount: 1
    containerSpec:
      imageUri: local
      command: [echo, "true"]
scheduling:
  timeout: 7200s
  restartJobOnWorkerRestart: true
)",
                                 "--config job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(CustomJobSpecToJson(*spec).dump(),
            R"({"scheduling":{"restartJobOnWorkerRestart":true,"timeout":"7200s"},)"
            R"("workerPoolSpecs":[{"containerSpec":{"command":["echo","true"],"imageUri":"local"},)"
            R"("machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1"}]})");
}

TEST(JobConfigYamlTest, RejectsSnakeCaseKeysWithTheFix) {
  auto spec = ParseJobConfigYaml("worker_pool_specs: []\n", "--config job.yaml");
  EXPECT_EQ(spec.status().message(),
            "--config job.yaml: worker_pool_specs: keys must be lowerCamelCase; write "
            "'workerPoolSpecs' instead of 'worker_pool_specs'");
}

TEST(JobConfigYamlTest, RejectsMalformedYaml) {
  auto spec = ParseJobConfigYaml("workerPoolSpecs: [\n", "--config job.yaml");
  EXPECT_TRUE(spec.status().message().starts_with("--config job.yaml: malformed YAML"))
      << spec.status();
}

TEST(JobConfigYamlTest, JsonToYamlIsReadableAndReparses) {
  nlohmann::json j = {{"name", "a/b"}, {"list", {{{"k", 1}, {"v", "x y"}}, "s"}}, {"t", true}};
  std::string y = JsonToYaml(j);
  EXPECT_EQ(YamlToJson(y).value(), j) << y;
}

}  // namespace
}  // namespace trainyard::spec
