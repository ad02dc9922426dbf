#include "common/bucket_path.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace trainyard {
namespace {

TEST(BucketPathTest, MapsGcsUriUnderBucketRoot) {
  ::setenv("TRAINYARD_BUCKET_ROOT", "/srv/buckets", 1);
  EXPECT_EQ(ResolveStoragePath("gs://my-bucket/jobs/1/model")->string(),
            "/srv/buckets/my-bucket/jobs/1/model");
  EXPECT_EQ(ResolveStoragePath("gs://my-bucket")->string(), "/srv/buckets/my-bucket");
  EXPECT_EQ(ResolveStoragePath("data/train.csv")->string(), "data/train.csv");
}

TEST(BucketPathTest, RejectsEscapesAndMissingBucket) {
  EXPECT_EQ(ResolveStoragePath("gs://b/../../etc").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveStoragePath("gs:///x").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trainyard
