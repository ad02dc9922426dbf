#include "container/container_engine.h"

#include <gtest/gtest.h>

namespace trainyard::container {
namespace {

TEST(ContainerNameTest, DerivedFromJobPoolAndReplica) {
  EXPECT_EQ(ContainerName("1234", 0, 0) + " " + ContainerName("job-a.b_c", 2, 7),
            "trainyard-1234-wp0-0 trainyard-job-a.b_c-wp2-7");
}

TEST(ContainerNameTest, InvalidCharactersAreReplacedAndHashed) {
  std::string a = ContainerName("projects/p/jobs/1", 1, 0);
  std::string b = ContainerName("projects_p/jobs/1", 1, 0);
  EXPECT_EQ(a.substr(0, 28), "trainyard-projects_p_jobs_1-");
  EXPECT_NE(a, b);  // the hash keeps distinct job ids apart
}

TEST(ContainerEnvTest, GcsOutputDirsBecomeFusePaths) {
  auto env = ContainerEnv({{"AIP_MODEL_DIR", "gs://bucket/out/model/"},
                           {"AIP_CHECKPOINT_DIR", "/local/ckpt"},
                           {"AIP_TENSORBOARD_LOG_DIR", "gs://b2/logs/"},
                           {"OTHER", "gs://bucket/x"},
                           {"TRAINYARD_BUCKET_ROOT", "/var/lib/buckets"}});
  std::string out;
  for (const auto& [k, v] : env) out += k + "=" + v + "\n";
  EXPECT_EQ(out,
            "AIP_CHECKPOINT_DIR=/local/ckpt\n"
            "AIP_MODEL_DIR=/gcs/bucket/out/model/\n"
            "AIP_TENSORBOARD_LOG_DIR=/gcs/b2/logs/\n"
            "OTHER=gs://bucket/x\n"
            "TRAINYARD_BUCKET_ROOT=/gcs\n");
}

}  // namespace
}  // namespace trainyard::container
