#include "tuning/gaussian_process.h"

#include <cmath>
#include <limits>

#include "tuning/lbfgs.h"
#include "tuning/rng.h"

namespace trainyard::tuning {
namespace {

constexpr double kSqrt5 = 2.23606797749979;
constexpr double kLog2Pi = 1.8378770664093453;
constexpr double kJitter = 1e-9;

// Squared scaled distances between rows: (Na, Nb).
Eigen::MatrixXd ScaledSquaredDistances(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                                       const Eigen::VectorXd& length_scales) {
  const Eigen::RowVectorXd inv = length_scales.cwiseInverse().transpose();
  const Eigen::MatrixXd as = a.array().rowwise() * inv.array();
  const Eigen::MatrixXd bs = b.array().rowwise() * inv.array();
  Eigen::MatrixXd d2 = (-2.0 * as * bs.transpose()).colwise() + as.rowwise().squaredNorm();
  d2.rowwise() += bs.rowwise().squaredNorm().transpose();
  return d2.cwiseMax(0.0);
}

}  // namespace

Eigen::MatrixXd Matern52Kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                               const GpHyperparameters& hp) {
  const Eigen::ArrayXXd r = ScaledSquaredDistances(a, b, hp.length_scales).array().sqrt();
  return (hp.signal_variance * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r.square()) * (-kSqrt5 * r).exp())
      .matrix();
}

double LogMarginalLikelihood(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                             const GpHyperparameters& hp, Eigen::VectorXd* grad) {
  const Eigen::Index n = x.rows();
  const Eigen::Index d = x.cols();
  const Eigen::ArrayXXd r = ScaledSquaredDistances(x, x, hp.length_scales).array().sqrt();
  const Eigen::ArrayXXd e = (-kSqrt5 * r).exp();
  const Eigen::ArrayXXd m = (1.0 + kSqrt5 * r + (5.0 / 3.0) * r.square()) * e;  // k / s2
  Eigen::MatrixXd k = hp.signal_variance * m.matrix();
  k.diagonal().array() += hp.noise_variance + kJitter;
  Eigen::LLT<Eigen::MatrixXd> llt(k);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const Eigen::VectorXd alpha = llt.solve(y);
  const double log_det = 2.0 * llt.matrixL().toDenseMatrix().diagonal().array().log().sum();
  const double lml = -0.5 * y.dot(alpha) - 0.5 * log_det - 0.5 * static_cast<double>(n) * kLog2Pi;
  if (grad == nullptr) return lml;

  // dL/dθ = ½ tr((α αᵀ − K⁻¹) ∂K/∂θ).
  const Eigen::MatrixXd w = alpha * alpha.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
  grad->resize(d + 2);
  // ∂k/∂ln l_d = s2 · (5/3)(1 + √5 r) e^{-√5 r} · (Δ_d / l_d)².
  const Eigen::ArrayXXd a = hp.signal_variance * (5.0 / 3.0) * (1.0 + kSqrt5 * r) * e;
  const Eigen::ArrayXXd wa = w.array() * a;
  for (Eigen::Index j = 0; j < d; ++j) {
    const Eigen::VectorXd col = x.col(j) / hp.length_scales[j];
    Eigen::ArrayXXd delta2 =
        (col.replicate(1, n) - col.transpose().replicate(n, 1)).array().square();
    (*grad)[j] = 0.5 * (wa * delta2).sum();
  }
  (*grad)[d] = 0.5 * (w.array() * (hp.signal_variance * m)).sum();
  (*grad)[d + 1] = 0.5 * hp.noise_variance * w.trace();
  return lml;
}

namespace {

// The fit runs on θ = (ln l_1..ln l_d, ln s2, ln noise) kept inside [lo, hi] by optimising an
// unbounded z with θ = lo + (hi - lo) · sigmoid(z).
struct ThetaBounds {
  Eigen::VectorXd lo, hi;

  Eigen::VectorXd ThetaOf(const Eigen::VectorXd& z) const {
    return (lo.array() + (hi - lo).array() / (1.0 + (-z.array()).exp())).matrix().eval();
  }
  Eigen::VectorXd ZOf(const Eigen::VectorXd& theta) const {
    Eigen::ArrayXd p = ((theta - lo).array() / (hi - lo).array()).cwiseMax(1e-6).cwiseMin(1 - 1e-6);
    return (p / (1.0 - p)).log().matrix().eval();
  }
};

ThetaBounds BoundsOf(const GpFitOptions& options, Eigen::Index d) {
  ThetaBounds b{Eigen::VectorXd(d + 2), Eigen::VectorXd(d + 2)};
  b.lo.head(d).setConstant(std::log(options.min_length_scale));
  b.hi.head(d).setConstant(std::log(options.max_length_scale));
  b.lo[d] = std::log(options.min_signal_variance);
  b.hi[d] = std::log(options.max_signal_variance);
  b.lo[d + 1] = std::log(options.min_noise_variance);
  b.hi[d + 1] = std::log(options.max_noise_variance);
  return b;
}

GpHyperparameters HyperparametersOf(const Eigen::VectorXd& theta, Eigen::Index d) {
  GpHyperparameters hp;
  hp.length_scales = theta.head(d).array().exp();
  hp.signal_variance = std::exp(theta[d]);
  hp.noise_variance = std::exp(theta[d + 1]);
  return hp;
}

// The location of the dimension-scaled log-normal length-scale prior: √2 + ln(D)/2.
double LogNormalPriorLocation(Eigen::Index d) {
  return std::sqrt(2.0) + 0.5 * std::log(static_cast<double>(d));
}

// L-BFGS starts in θ: the warm start (when its dimension still fits), a fixed default, then
// options.random_starts draws from the middle 80% of the box.
std::vector<Eigen::VectorXd> StartingThetas(const GpFitOptions& options, const ThetaBounds& b,
                                            Eigen::Index d) {
  std::vector<Eigen::VectorXd> starts;
  if (options.warm_start && options.warm_start->length_scales.size() == d) {
    Eigen::VectorXd t(d + 2);
    t.head(d) = options.warm_start->length_scales.array().log();
    t[d] = std::log(options.warm_start->signal_variance);
    t[d + 1] = std::log(options.warm_start->noise_variance);
    starts.push_back(t);
  }
  Eigen::VectorXd t0(d + 2);
  const bool log_normal =
      options.length_scale_prior == GpFitOptions::LengthScalePrior::kDimensionScaledLogNormal;
  t0.head(d).setConstant(log_normal ? std::min(LogNormalPriorLocation(d), b.hi[0] - 0.1)
                                    : std::log(0.3));
  t0[d] = 0.0;
  t0[d + 1] = std::log(1e-3);
  starts.push_back(t0);
  Rng rng(options.seed);
  for (int i = 0; i < options.random_starts; ++i) {
    Eigen::VectorXd t(d + 2);
    for (Eigen::Index j = 0; j < d + 2; ++j)
      t[j] = b.lo[j] + (b.hi[j] - b.lo[j]) * (0.1 + 0.8 * rng.Uniform());
    starts.push_back(t);
  }
  return starts;
}

}  // namespace

StatusOr<GpHyperparameters> FitGpHyperparameters(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                 const GpFitOptions& options) {
  const Eigen::Index d = x.cols();
  if (x.rows() == 0) return FailedPreconditionError("GP fit: no observations");
  const ThetaBounds b = BoundsOf(options, d);
  const Eigen::VectorXd &lo = b.lo, &hi = b.hi;
  Objective objective = [&](const Eigen::VectorXd& z, Eigen::VectorXd* grad) {
    const Eigen::VectorXd theta = b.ThetaOf(z);
    Eigen::VectorXd g;
    double lml = LogMarginalLikelihood(x, y, HyperparametersOf(theta, d), &g);
    if (!std::isfinite(lml)) return std::numeric_limits<double>::infinity();
    if (options.length_scale_prior == GpFitOptions::LengthScalePrior::kGamma) {
      // Gamma(3, 6) on l, written on θ = ln l: 3θ - 6 e^θ (+ const, Jacobian included).
      for (Eigen::Index j = 0; j < d; ++j) {
        const double l = std::exp(theta[j]);
        lml += 3.0 * theta[j] - 6.0 * l;
        g[j] += 3.0 - 6.0 * l;
      }
    } else if (options.length_scale_prior ==
               GpFitOptions::LengthScalePrior::kDimensionScaledLogNormal) {
      // LogNormal(μ, σ) on l is Normal(μ, σ) on θ = ln l (Jacobian included).
      const double mu = LogNormalPriorLocation(d), var = 3.0;
      for (Eigen::Index j = 0; j < d; ++j) {
        lml -= (theta[j] - mu) * (theta[j] - mu) / (2 * var);
        g[j] -= (theta[j] - mu) / var;
      }
    }
    const Eigen::ArrayXd s = (theta - lo).array() / (hi - lo).array();  // sigmoid(z)
    *grad = -(g.array() * (hi - lo).array() * s * (1.0 - s)).matrix();
    return -lml;
  };

  LbfgsOptions lopts;
  lopts.max_iterations = options.max_iterations;
  double best_value = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_theta;
  for (const Eigen::VectorXd& start : StartingThetas(options, b, d)) {
    LbfgsResult r = MinimizeLbfgs(objective, b.ZOf(start), lopts);
    if (std::isfinite(r.value) && r.value < best_value) {
      best_value = r.value;
      best_theta = b.ThetaOf(r.x);
    }
  }
  if (!std::isfinite(best_value)) {
    return FailedPreconditionError("GP fit: the kernel matrix is singular at every start");
  }
  return HyperparametersOf(best_theta, d);
}

StatusOr<GaussianProcess> GaussianProcess::Condition(Eigen::MatrixXd x, Eigen::VectorXd y,
                                                     GpHyperparameters hp) {
  GaussianProcess gp;
  Eigen::MatrixXd k = Matern52Kernel(x, x, hp);
  double jitter = kJitter;
  for (int attempt = 0; attempt < 6; ++attempt, jitter *= 100) {
    Eigen::MatrixXd kk = k;
    kk.diagonal().array() += hp.noise_variance + jitter;
    gp.llt_.compute(kk);
    if (gp.llt_.info() == Eigen::Success) {
      gp.alpha_ = gp.llt_.solve(y);
      gp.x_ = std::move(x);
      gp.y_ = std::move(y);
      gp.hp_ = std::move(hp);
      return gp;
    }
  }
  return FailedPreconditionError("GP: the kernel matrix is not positive definite");
}

GaussianProcess::Prediction GaussianProcess::Predict(const Eigen::MatrixXd& xs) const {
  const Eigen::MatrixXd ks = Matern52Kernel(x_, xs, hp_);  // (N, M)
  Prediction p;
  p.mean = ks.transpose() * alpha_;
  const Eigen::MatrixXd v = llt_.matrixL().solve(ks);  // (N, M)
  p.variance = (hp_.signal_variance - v.colwise().squaredNorm().transpose().array()).cwiseMax(0.0);
  return p;
}

namespace {

double NormPdf(double z) { return 0.3989422804014327 * std::exp(-0.5 * z * z); }
double NormCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// log(φ(z) + zΦ(z)). Direct for z > -20 (the cancellation costs < 1e-13 relative there); below,
// the asymptotic series of the Mills ratio: φ(z)(1/t² - 3/t⁴ + 15/t⁶ - 105/t⁸), t = -z.
double LogH(double z) {
  if (z > -20) return std::log(NormPdf(z) + z * NormCdf(z));
  const double t2 = z * z;
  const double series =
      1.0 / t2 - 3.0 / (t2 * t2) + 15.0 / (t2 * t2 * t2) - 105.0 / (t2 * t2 * t2 * t2);
  return -0.5 * t2 - 0.9189385332046727 + std::log(series);
}

}  // namespace

double ExpectedImprovement(double mean, double variance, double best, double xi) {
  const double imp = mean - best - xi;
  if (variance <= 0) return std::max(imp, 0.0);
  const double sigma = std::sqrt(variance);
  const double z = imp / sigma;
  return std::max(0.0, imp * NormCdf(z) + sigma * NormPdf(z));
}

double LogExpectedImprovement(double mean, double variance, double best, double xi) {
  const double imp = mean - best - xi;
  if (variance <= 0) return imp > 0 ? std::log(imp) : -std::numeric_limits<double>::infinity();
  const double sigma = std::sqrt(variance);
  return std::log(sigma) + LogH(imp / sigma);
}

}  // namespace trainyard::tuning
