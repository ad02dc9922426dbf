#include "machines/regions.h"

#include <gtest/gtest.h>

namespace trainyard::machines {
namespace {

TEST(RegionsTest, KnowsVertexTrainingRegionsAndLocal) {
  for (const char* r : {"us-central1", "europe-west4", "asia-east1", "me-central2", "local"}) {
    EXPECT_TRUE(IsKnownRegion(r)) << r;
    EXPECT_TRUE(CheckRegion("parent", r).ok()) << r;
  }
  EXPECT_EQ(KnownRegions().size(), 39u);
  for (const char* r : {"", "us-central", "US-CENTRAL1", "global", "us-central1 "}) {
    EXPECT_FALSE(IsKnownRegion(r)) << r;
  }
}

TEST(RegionsTest, ATypoIsRefusedWithTheNearestRegion) {
  const Status s = CheckRegion("trainingInput.region", "us-centrall");
  EXPECT_EQ(s.ToString(),
            "INVALID_ARGUMENT: trainingInput.region: 'us-centrall' is not a region Trainyard "
            "knows; did you mean 'us-central1'? (Vertex AI's training regions, or 'local')");
  ASSERT_EQ(s.field_violations().size(), 1u);
  EXPECT_EQ(s.field_violations()[0].field, "trainingInput.region");
  EXPECT_EQ(CheckRegion("parent", "mars").message(),
            "parent: 'mars' is not a region Trainyard knows; (Vertex AI's training regions, or "
            "'local')");
}

}  // namespace
}  // namespace trainyard::machines
