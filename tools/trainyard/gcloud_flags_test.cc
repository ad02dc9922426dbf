#include "gcloud_flags.h"

#include <gtest/gtest.h>

#include "spec/custom_job_json.h"
#include "testing/test_util.h"

namespace trainyard::cli {
namespace {

TEST(GcloudFlagsTest, ArgListSplitsOnCommasOrCustomDelimiter) {
  auto plain = ParseArgList("--epochs=10,--batch-size=128");
  auto custom = ParseArgList("^:^--lr=1,2:--x");
  EXPECT_EQ(plain[1] + "|" + custom[0] + "|" + custom[1], "--batch-size=128|--lr=1,2|--x");
}

TEST(GcloudFlagsTest, ArticleWorkerPoolSpec) {
  auto pool = ParseWorkerPoolSpec(
      "machine-type=n1-standard-4,accelerator-type=NVIDIA_TESLA_T4,accelerator-count=1,"
      "replica-count=1,container-image-uri=eu.gcr.io/p/pt_bert_sentiment:dev",
      {});
  ASSERT_TRUE(pool.ok()) << pool.status();
  spec::CustomJobSpec s;
  s.worker_pool_specs.push_back(*pool);
  EXPECT_EQ(spec::CustomJobSpecToJson(s)["workerPoolSpecs"][0].dump(),
            R"({"containerSpec":{"imageUri":"eu.gcr.io/p/pt_bert_sentiment:dev"},)"
            R"("machineSpec":{"acceleratorCount":1,"acceleratorType":"NVIDIA_TESLA_T4",)"
            R"("machineType":"n1-standard-4"},"replicaCount":"1"})");
}

TEST(GcloudFlagsTest, ErrorsNameTheKey) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"machine-type=n1-standard-4,replica-cnt=2,container-image-uri=x",
       "unknown key 'replica-cnt' in --worker-pool-spec"},
      {"machine-type=n1-standard-4,replica-count=two,container-image-uri=x",
       "--worker-pool-spec: replica-count must be an integer >= 1, got 'two'"},
      {"replica-count=1,container-image-uri=x", "--worker-pool-spec: machine-type is required"},
      {"machine-type=m,container-image-uri",
       "--worker-pool-spec: 'container-image-uri' is not KEY=VALUE"},
      {"machine-type=m,machine-type=n,container-image-uri=x",
       "--worker-pool-spec: key 'machine-type' is given twice"},
      {"machine-type=m,script=a.py", "--worker-pool-spec: key 'script' (autopackaging"},
      {"machine-type=m", "--worker-pool-spec: give container-image-uri=IMAGE"},
  };
  std::string report;
  for (const auto& [value, want] : cases) {
    std::string got = ParseWorkerPoolSpec(value, {}).status().message();
    if (!got.starts_with(want)) report += value + " -> " + got + "\n";
  }
  EXPECT_EQ(report, "");
}

TEST(GcloudFlagsTest, FlagsOverrideConfig) {
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "job.yaml", R"(workerPoolSpecs:
  - machineSpec: {machineType: n1-standard-4}
    replicaCount: 1
    containerSpec: {imageUri: local, command: [echo], args: [from-config]}
scheduling: {timeout: 60s}
serviceAccount: a@b
)");
  CreateFlags f;
  f.display_name = "j";
  f.config_path = (dir / "job.yaml").string();
  f.args = "from-flag,second";
  f.labels = "team=nlp";
  f.service_account = "c@d";
  auto job = BuildCreateRequest(f);
  ASSERT_TRUE(job.ok()) << job.status();
  const auto& c = *job->job_spec.worker_pool_specs[0].container_spec;
  EXPECT_EQ(c.command[0] + " " + c.args[0] + " " + c.args[1] + " " + job->labels["team"] + " " +
                job->job_spec.service_account + " " +
                std::to_string(job->job_spec.scheduling->timeout->count()),
            "echo from-flag second nlp c@d 60000");
}

TEST(GcloudFlagsTest, NeedsPoolsAndGoodLabels) {
  CreateFlags f;
  f.display_name = "j";
  EXPECT_TRUE(BuildCreateRequest(f).status().message().starts_with(
      "one of --worker-pool-spec or --config is required"));
  f.worker_pool_specs = {"machine-type=m,container-image-uri=x"};
  f.labels = "team";
  EXPECT_EQ(BuildCreateRequest(f).status().message(), "--labels: 'team' is not KEY=VALUE");
}

}  // namespace
}  // namespace trainyard::cli
