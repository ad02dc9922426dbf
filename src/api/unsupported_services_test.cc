#include "api/unsupported_services.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

TEST(UnsupportedVertexServiceTest, NamesTheServiceOfAKnownCollectionOnly) {
  EXPECT_EQ(UnsupportedVertexService("/v1/projects/p/locations/l/tensorboards/1/experiments")
                .value_or("none"),
            "Vertex AI TensorBoard instances (the SDK's tensorboard= argument)");
  EXPECT_EQ(UnsupportedVertexService("/v1beta1/projects/p/locations/l/pipelineJobs").value_or(""),
            "Vertex AI Pipelines (PipelineJob)");
  EXPECT_EQ(UnsupportedVertexService("/v1/projects/p/locations/l/endpoints/1:predict").value_or(""),
            "Vertex AI endpoints (online prediction)");
  for (const char* path :
       {"/v1/projects/p/locations/l/customJobs", "/v1/projects/p/locations/l/colours",
        "/v1/projects/p/metadataStores", "/v2/projects/p/locations/l/datasets",
        "/storage/v1/b/datasets", "/v1/projects/p/locations/l", "/v1/"}) {
    EXPECT_FALSE(UnsupportedVertexService(path).has_value()) << path;
  }
}

}  // namespace
}  // namespace trainyard::api
