#include "tuning/gaussian_process.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tuning/rng.h"

namespace trainyard::tuning {
namespace {

GpHyperparameters Hp(std::vector<double> ls, double s2, double noise) {
  GpHyperparameters hp;
  hp.length_scales = Eigen::Map<Eigen::VectorXd>(ls.data(), static_cast<Eigen::Index>(ls.size()));
  hp.signal_variance = s2;
  hp.noise_variance = noise;
  return hp;
}

double Matern(double r, double s2) {
  return s2 * (1 + std::sqrt(5.0) * r + 5.0 / 3.0 * r * r) * std::exp(-std::sqrt(5.0) * r);
}

// Two observations in 1-D, worked by hand: K = [[s2+n, k],[k, s2+n]], k = m(|x1-x2|/l).
TEST(GaussianProcessTest, TwoPointPosteriorMatchesHandComputation) {
  Eigen::MatrixXd x(2, 1);
  x << 0.2, 0.6;
  Eigen::VectorXd y(2);
  y << 1.0, -0.5;
  const double l = 0.5, s2 = 2.0, n = 0.01;
  auto gp = GaussianProcess::Condition(x, y, Hp({l}, s2, n));
  ASSERT_TRUE(gp.ok()) << gp.status();
  const double xs = 0.35;
  const double k12 = Matern(0.4 / l, s2);
  const double a = s2 + n, det = a * a - k12 * k12;
  // K^-1 = [[a, -k],[-k, a]] / det
  const double ks1 = Matern(0.15 / l, s2), ks2 = Matern(0.25 / l, s2);
  const double w1 = (a * ks1 - k12 * ks2) / det, w2 = (-k12 * ks1 + a * ks2) / det;
  const double mean = w1 * y[0] + w2 * y[1];
  const double var = s2 - (w1 * ks1 + w2 * ks2);
  Eigen::MatrixXd q(1, 1);
  q << xs;
  auto p = gp->Predict(q);
  EXPECT_NEAR(p.mean[0], mean, 1e-9);
  EXPECT_NEAR(p.variance[0], var, 1e-9);
}

TEST(GaussianProcessTest, LogMarginalLikelihoodGradientMatchesFiniteDifferences) {
  Rng rng(7);
  Eigen::MatrixXd x(12, 3);
  Eigen::VectorXd y(12);
  for (int i = 0; i < 12; ++i) {
    for (int j = 0; j < 3; ++j) x(i, j) = rng.Uniform();
    y[i] = std::sin(4 * x(i, 0)) + x(i, 1) * x(i, 1) + 0.1 * rng.Normal();
  }
  GpHyperparameters hp = Hp({0.3, 0.7, 1.5}, 1.3, 0.02);
  Eigen::VectorXd grad;
  LogMarginalLikelihood(x, y, hp, &grad);
  Eigen::VectorXd theta(5);
  theta << std::log(0.3), std::log(0.7), std::log(1.5), std::log(1.3), std::log(0.02);
  auto at = [&](const Eigen::VectorXd& t) {
    return LogMarginalLikelihood(
        x, y, Hp({std::exp(t[0]), std::exp(t[1]), std::exp(t[2])}, std::exp(t[3]), std::exp(t[4])));
  };
  for (int j = 0; j < 5; ++j) {
    Eigen::VectorXd tp = theta, tm = theta;
    tp[j] += 1e-5;
    tm[j] -= 1e-5;
    EXPECT_NEAR(grad[j], (at(tp) - at(tm)) / 2e-5, 1e-4 * (1 + std::fabs(grad[j]))) << "j=" << j;
  }
}

// Data drawn from a GP-like smooth function varying along x0 only: the fit must give x0 a short
// length scale and the irrelevant x1 a long one, and recover the scale of a known sample path.
TEST(GaussianProcessTest, MarginalLikelihoodFitRecoversLengthScale) {
  Rng rng(3);
  const int n = 60;
  Eigen::MatrixXd x(n, 2);
  for (int i = 0; i < n; ++i) {
    x(i, 0) = rng.Uniform();
    x(i, 1) = rng.Uniform();
  }
  // A sample from the GP prior with l0 = 0.2 and l1 = very long (x1 irrelevant).
  GpHyperparameters truth = Hp({0.2, 1000.0}, 1.0, 1e-4);
  Eigen::MatrixXd k = Matern52Kernel(x, x, truth);
  k.diagonal().array() += 1e-4;
  Eigen::LLT<Eigen::MatrixXd> llt(k);
  Eigen::VectorXd z(n);
  for (int i = 0; i < n; ++i) z[i] = rng.Normal();
  Eigen::VectorXd y = llt.matrixL() * z;
  GpFitOptions opts;
  opts.length_scale_prior = GpFitOptions::LengthScalePrior::kNone;  // plain maximum likelihood
  opts.seed = 1;
  auto hp = FitGpHyperparameters(x, y, opts);
  ASSERT_TRUE(hp.ok()) << hp.status();
  EXPECT_NEAR(hp->length_scales[0], 0.2, 0.08);
  EXPECT_GT(hp->length_scales[1], 2.0);
}

TEST(GaussianProcessTest, ExpectedImprovementClosedFormAndLogTail) {
  // EI(μ=1, σ=1, best=1) = σ φ(0) = 0.39894...
  EXPECT_NEAR(ExpectedImprovement(1.0, 1.0, 1.0), 0.3989422804014327, 1e-12);
  // Far tail: EI underflows to ~0 but its log stays finite and ordered.
  const double a = LogExpectedImprovement(0.0, 1e-4, 1.0);  // z = -100
  const double b = LogExpectedImprovement(0.0, 1e-4, 0.5);  // z = -50
  EXPECT_TRUE(std::isfinite(a));
  EXPECT_LT(a, b);
  // Continuity of the log at the switch point z = -20.
  EXPECT_NEAR(LogExpectedImprovement(0.0, 1.0, 20.0 - 1e-9),
              LogExpectedImprovement(0.0, 1.0, 20.0 + 1e-9), 1e-4);
  EXPECT_NEAR(std::exp(LogExpectedImprovement(0.3, 0.2, 0.5)), ExpectedImprovement(0.3, 0.2, 0.5),
              1e-12);
}

}  // namespace
}  // namespace trainyard::tuning
