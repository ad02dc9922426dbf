#include "tuning/output_warping.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace trainyard::tuning {
namespace {

Eigen::VectorXd Standardise(const Eigen::VectorXd& y) {
  const double mean = y.mean();
  const double sd = std::sqrt((y.array() - mean).square().sum() / static_cast<double>(y.size()));
  return (y.array() - mean) / (sd > 1e-12 ? sd : 1.0);
}

Eigen::VectorXd Transform(const Eigen::VectorXd& y, double lambda) {
  Eigen::VectorXd out(y.size());
  for (Eigen::Index i = 0; i < y.size(); ++i) out[i] = YeoJohnson(y[i], lambda);
  return out;
}

}  // namespace

double YeoJohnson(double y, double lambda) {
  if (y >= 0) {
    return std::abs(lambda) < 1e-8 ? std::log1p(y) : (std::pow(y + 1, lambda) - 1) / lambda;
  }
  const double mu = 2 - lambda;
  return std::abs(mu) < 1e-8 ? -std::log1p(-y) : -(std::pow(1 - y, mu) - 1) / mu;
}

double YeoJohnsonLogLikelihood(const Eigen::VectorXd& y, double lambda) {
  const Eigen::VectorXd psi = Transform(y, lambda);
  const double n = static_cast<double>(y.size());
  const double var = (psi.array() - psi.mean()).square().sum() / n;
  if (!(var > 0) || !std::isfinite(var)) return -std::numeric_limits<double>::infinity();
  double jacobian = 0;
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    jacobian += (y[i] >= 0 ? 1.0 : -1.0) * std::log1p(std::abs(y[i]));
  }
  return -0.5 * n * std::log(var) + (lambda - 1) * jacobian;
}

WarpedOutputs WarpOutputs(const Eigen::VectorXd& y) {
  WarpedOutputs out;
  const Eigen::VectorXd z = Standardise(y);
  std::set<double> distinct(y.data(), y.data() + y.size());
  if (distinct.size() < 3) {
    out.values = z;
    return out;
  }
  // Golden-section search: the log-likelihood is concave in λ for all practical data.
  constexpr double kInvPhi = 0.6180339887498949;
  double a = -2, b = 4;
  double c = b - kInvPhi * (b - a), d = a + kInvPhi * (b - a);
  double fc = YeoJohnsonLogLikelihood(z, c), fd = YeoJohnsonLogLikelihood(z, d);
  for (int iter = 0; iter < 40; ++iter) {
    if (fc > fd) {
      b = d, d = c, fd = fc;
      c = b - kInvPhi * (b - a);
      fc = YeoJohnsonLogLikelihood(z, c);
    } else {
      a = c, c = d, fc = fd;
      d = a + kInvPhi * (b - a);
      fd = YeoJohnsonLogLikelihood(z, d);
    }
  }
  const double lambda = 0.5 * (a + b);
  const Eigen::VectorXd t = Transform(z, lambda);
  if (!t.allFinite()) {
    out.values = z;
    return out;
  }
  out.values = Standardise(t);
  out.lambda = lambda;
  return out;
}

}  // namespace trainyard::tuning
