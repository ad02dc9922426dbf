#include "spec/job_priority.h"

#include <gtest/gtest.h>

namespace trainyard::spec {
namespace {

// "value -> priority or error code" for each label value, and the absent label.
TEST(JobPriorityTest, TheLabelIsAnIntegerFrom0To1000) {
  std::string got = "none->" + std::to_string(*PriorityFromLabels({}));
  for (const char* value : {"0", "1000", "500", "-1", "1001", "5x", "", " 5", "+5"}) {
    auto p = PriorityFromLabels({{kPriorityLabel, value}});
    got += std::string(" ") + value + "->" +
           (p.ok() ? std::to_string(*p) : std::string(StatusCodeName(p.status().code())));
  }
  EXPECT_EQ(got,
            "none->0 0->0 1000->1000 500->500 -1->INVALID_ARGUMENT 1001->INVALID_ARGUMENT "
            "5x->INVALID_ARGUMENT ->INVALID_ARGUMENT  5->INVALID_ARGUMENT +5->INVALID_ARGUMENT");
}

}  // namespace
}  // namespace trainyard::spec
