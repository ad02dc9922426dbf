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

// Found by fuzz/yaml_config_fuzzer: bytes that are not UTF-8 made JsonToYaml (and any request
// built from the config) throw inside nlohmann::json::dump.
TEST(JobConfigYamlTest, RejectsStringsThatAreNotUtf8) {
  const std::string yaml = "workerPoolSpecs:\n- machineSpec: {machineType: \"n1-\xf7\xff\"}\n";
  auto spec = ParseJobConfigYaml(yaml, "--config x.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("not valid UTF-8"), std::string::npos) << spec.status();
  EXPECT_NE(spec.status().message().find("x.yaml"), std::string::npos) << spec.status();
  EXPECT_FALSE(YamlToJson(std::string("a: \x00\xff\xff C\xff\xff\x0e\n", 13)).ok());
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

TEST(JobConfigYamlTest, NestingIsLimitedLikeJson) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(YamlToJson(nested(100)).ok());
  EXPECT_EQ(YamlToJson(nested(101)).status().ToString(),
            "INVALID_ARGUMENT: YAML nests deeper than 100 levels; flatten it");
  // Deep enough for yaml-cpp's own recursion guard: refused, not a stack overflow.
  EXPECT_EQ(YamlToJson(nested(100000)).status().code(), StatusCode::kInvalidArgument);
}

TEST(JobConfigYamlTest, AliasBombIsRefused) {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    yaml += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" +
            prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + "]\n";
  }
  EXPECT_NE(YamlToJson(yaml).status().message().find("more than 1000000 values"),
            std::string::npos);
}

}  // namespace
}  // namespace trainyard::spec
