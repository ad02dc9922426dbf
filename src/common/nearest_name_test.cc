#include "common/nearest_name.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(NearestNameTest, OnlyTypos) {
  EXPECT_EQ(NearestName("n1-standrd-4", {"n1-standard-4", "n1-standard-8", "e2-small"}),
            "n1-standard-4");
  EXPECT_EQ(NearestName("us-centrall", {"europe-west4", "us-central1", "us-east1"}), "us-central1");
  EXPECT_EQ(NearestName("xyz", {"create", "list"}), "");
  EXPECT_EQ(NearestName("lst", {"create", "list"}), "list");
  EXPECT_EQ(NearestName("ls", {"cp"}), "");
  EXPECT_EQ(NearestName("", {"a"}), "a");
  EXPECT_EQ(NearestName("abc", {}), "");
}

}  // namespace
}  // namespace trainyard
