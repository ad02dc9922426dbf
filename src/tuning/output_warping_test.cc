#include "tuning/output_warping.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trainyard::tuning {
namespace {

double Skewness(const Eigen::VectorXd& v) {
  const double mean = v.mean();
  const double sd = std::sqrt((v.array() - mean).square().mean());
  return ((v.array() - mean) / sd).cube().mean();
}

TEST(OutputWarpingTest, YeoJohnsonIsTheIdentityAtOneAndMonotone) {
  for (double y : {-3.0, -0.5, 0.0, 0.5, 3.0}) EXPECT_NEAR(YeoJohnson(y, 1.0), y, 1e-12);
  for (double lambda : {-2.0, 0.0, 0.5, 2.0, 4.0}) {
    double last = -std::numeric_limits<double>::infinity();
    for (double y = -5; y <= 5; y += 0.25) {
      const double t = YeoJohnson(y, lambda);
      EXPECT_GT(t, last) << "lambda " << lambda << " y " << y;
      last = t;
    }
  }
}

// A maximised negated loss with a long tail of bad values (Branin-like): the fitted transform
// compresses the tail (λ > 1), keeps the order, and leaves the values far less skewed.
TEST(OutputWarpingTest, ALongBadTailIsCompressedAndTheOrderKept) {
  Eigen::VectorXd y(40);
  for (int i = 0; i < 40; ++i) y[i] = -std::exp(0.15 * i);  // -1 .. -350
  WarpedOutputs w = WarpOutputs(y);
  EXPECT_GT(w.lambda, 1.0);
  EXPECT_NEAR(w.values.mean(), 0.0, 1e-9);
  EXPECT_NEAR(std::sqrt(w.values.array().square().mean()), 1.0, 1e-9);
  for (int i = 1; i < 40; ++i) EXPECT_LT(w.values[i], w.values[i - 1]);
  EXPECT_LT(std::abs(Skewness(w.values)), 0.5 * std::abs(Skewness(y)));
}

TEST(OutputWarpingTest, ConstantOrTwoValuedOutputsAreOnlyStandardised) {
  Eigen::VectorXd same = Eigen::VectorXd::Constant(5, 2.5);
  WarpedOutputs w = WarpOutputs(same);
  EXPECT_TRUE(w.values.allFinite());
  EXPECT_EQ(w.lambda, 1.0);
  Eigen::VectorXd two(4);
  two << 1, 3, 1, 3;
  w = WarpOutputs(two);
  EXPECT_EQ(w.lambda, 1.0);
  EXPECT_NEAR(w.values[0], -1.0, 1e-12);
  EXPECT_NEAR(w.values[1], 1.0, 1e-12);
}

}  // namespace
}  // namespace trainyard::tuning
