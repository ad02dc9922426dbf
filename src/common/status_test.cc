#include "common/status.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

StatusOr<int> ParsePositive(int v) {
  if (v <= 0) return InvalidArgumentError("--epochs: must be >= 1, got " + std::to_string(v));
  return v;
}

StatusOr<int> Doubled(int v) {
  TY_ASSIGN_OR_RETURN(int x, ParsePositive(v));
  return 2 * x;
}

TEST(StatusTest, ToStringNamesCodeAndMessage) {
  EXPECT_EQ(Status().ToString(), "OK");
  EXPECT_EQ(NotFoundError("file not found: x.csv").ToString(), "NOT_FOUND: file not found: x.csv");
  EXPECT_EQ(InvalidArgumentError("bad").WithPrefix("train.csv:3").ToString(),
            "INVALID_ARGUMENT: train.csv:3: bad");
}

TEST(StatusTest, AssignOrReturnPropagatesError) {
  EXPECT_EQ(*Doubled(4), 8);
  StatusOr<int> bad = Doubled(0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(), "INVALID_ARGUMENT: --epochs: must be >= 1, got 0");
}

}  // namespace
}  // namespace trainyard
