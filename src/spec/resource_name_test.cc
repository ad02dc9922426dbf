#include "spec/resource_name.h"

#include <gtest/gtest.h>

namespace trainyard::spec {
namespace {

TEST(ResourceNameTest, ParsesAndFormatsEveryCollection) {
  std::string out;
  for (auto [text, collection] : std::vector<std::pair<std::string, std::string_view>>{
           {"projects/p/locations/us-central1/customJobs/42", kCustomJobs},
           {"projects/example.com:proj/locations/l/hyperparameterTuningJobs/7",
            kHyperparameterTuningJobs},
           {"projects/p/locations/l/hyperparameterTuningJobs/7/trials/3", kTrials}}) {
    StatusOr<ResourceName> name = ResourceName::Parse(text, collection);
    ASSERT_TRUE(name.ok()) << name.status();
    EXPECT_EQ(name->ToString(), text);
    out += name->Parent() + " " + name->collection + " " + name->id + " " + name->trial_id + "|";
  }
  EXPECT_EQ(out,
            "projects/p/locations/us-central1 customJobs 42 |"
            "projects/example.com:proj/locations/l hyperparameterTuningJobs 7 |"
            "projects/p/locations/l hyperparameterTuningJobs 7 3|");
}

TEST(ResourceNameTest, RejectsWrongShapesAndSegments) {
  EXPECT_EQ(ResourceName::Parse("customJobs/1", kCustomJobs).status().message(),
            "'customJobs/1' is not a custom job name; expected "
            "projects/PROJECT/locations/LOCATION/customJobs/ID");
  EXPECT_EQ(ResourceName::Parse("projects/p/locations/l/customJobs/1", kHyperparameterTuningJobs)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ResourceName::Parse("projects/p/locations/l/customJobs/", kCustomJobs).status().message(),
      "id '' in a resource name is empty");
  EXPECT_EQ(LocationName::Parse("projects/p q/locations/l").status().message(),
            "project 'p q' in a resource name may hold only letters, digits and - _ . ~");
  EXPECT_FALSE(LocationName::Parse("projects/p/locations/a:b").ok());
  EXPECT_FALSE(LocationName::Parse("projects/" + std::string(129, 'p') + "/locations/l").ok());
}

TEST(ResourceNameTest, LocationRoundTripAndLastSegment) {
  StatusOr<LocationName> loc = LocationName::Parse("projects/p/locations/l");
  ASSERT_TRUE(loc.ok()) << loc.status();
  ResourceName job = ResourceName::Of(*loc, kCustomJobs, "9");
  EXPECT_EQ(job.ToString() + " " + std::string(LastSegment(job.ToString())) + " " +
                std::string(LastSegment("9")),
            "projects/p/locations/l/customJobs/9 9 9");
}

}  // namespace
}  // namespace trainyard::spec
