// Gaussian-process regression with a Matérn 5/2 ARD kernel, its marginal-likelihood fit and
// expected improvement: the model behind BayesianSearcher (Rasmussen & Williams, "Gaussian
// Processes for Machine Learning", 2006, eqs. 2.25-2.30 and 5.8-5.9; Jones et al. 1998 for EI).
//
// All linear algebra is Eigen (LLT). Inputs are rows of an (N, D) matrix, meant to lie in [0, 1]
// (SearchSpace's encoding); outputs are meant to be standardised by the caller. Prior mean 0.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"

namespace trainyard::tuning {

//   k(a, b) = s2 (1 + √5 r + 5/3 r²) exp(-√5 r),   r² = Σ_d ((a_d - b_d) / l_d)²
// and K = k(X, X) + noise_variance · I.
struct GpHyperparameters {
  Eigen::VectorXd length_scales;  // (D)
  double signal_variance = 1.0;
  double noise_variance = 1e-4;
};

// (Na, Nb) kernel matrix between the rows of a and b.
Eigen::MatrixXd Matern52Kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                               const GpHyperparameters& hp);

// log p(y | X, hp) (R&W eq. 2.30). With `grad` non-null, also writes its gradient with respect to
// the log-hyperparameters [ln l_1 .. ln l_D, ln s2, ln noise] (R&W eq. 5.9). Returns -infinity
// when K is not positive definite.
double LogMarginalLikelihood(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                             const GpHyperparameters& hp, Eigen::VectorXd* grad = nullptr);

struct GpFitOptions {
  // Box on the log-hyperparameters (inputs in [0, 1], outputs standardised).
  double min_length_scale = 0.01, max_length_scale = 20.0;
  double min_signal_variance = 0.05, max_signal_variance = 20.0;
  double min_noise_variance = 1e-6, max_noise_variance = 1.0;
  // A prior on each length scale, turning the fit into MAP. Without one, few observations often
  // make the likelihood "explain" a relevant dimension away with a length scale at the upper
  // bound, and EI then never explores along it. kGamma: Gamma(3, 6) (mode 1/3, mean 1/2;
  // BoTorch's long-time default). kDimensionScaledLogNormal: LogNormal(√2 + ln(D)/2, √3)
  // (Hvarfner et al., ICML 2024; BoTorch's default since 0.12): longer length scales the more
  // dimensions there are, so that a GP in 6-10 dimensions is not a sum of unrelated bumps.
  // kNone gives the plain maximum-likelihood fit.
  enum class LengthScalePrior { kNone, kGamma, kDimensionScaledLogNormal };
  LengthScalePrior length_scale_prior = LengthScalePrior::kGamma;
  int random_starts = 2;  // in addition to the default start and the warm start
  int max_iterations = 80;
  uint64_t seed = 0;
  std::optional<GpHyperparameters> warm_start;  // e.g. the previous fit of the same study
};

// Maximises the log marginal likelihood (plus the optional length-scale prior) over the box with
// multi-start L-BFGS on the log-hyperparameters (reparametrised through a sigmoid so the box is
// never left). Deterministic given its arguments. FAILED_PRECONDITION if no start gives a finite
// likelihood (e.g. N == 0).
StatusOr<GpHyperparameters> FitGpHyperparameters(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                 const GpFitOptions& options);

// A GP conditioned on (x, y) with fixed hyperparameters.
class GaussianProcess {
 public:
  // FAILED_PRECONDITION if K stays singular even after adding jitter.
  static StatusOr<GaussianProcess> Condition(Eigen::MatrixXd x, Eigen::VectorXd y,
                                             GpHyperparameters hp);

  struct Prediction {
    Eigen::VectorXd mean;      // (M) posterior mean of f
    Eigen::VectorXd variance;  // (M) posterior variance of f (noise-free), >= 0
  };
  // Posterior at the rows of xs (M, D).
  Prediction Predict(const Eigen::MatrixXd& xs) const;

  const GpHyperparameters& hyperparameters() const { return hp_; }
  const Eigen::MatrixXd& x() const { return x_; }
  const Eigen::VectorXd& y() const { return y_; }

 private:
  GaussianProcess() = default;
  Eigen::MatrixXd x_;
  Eigen::VectorXd y_;
  GpHyperparameters hp_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd alpha_;  // K^-1 y
};

// Expected improvement over `best` for maximisation: E[max(f - best - xi, 0)] with f ~ N(mean,
// variance). 0 when variance is 0 and mean <= best + xi.
double ExpectedImprovement(double mean, double variance, double best, double xi = 0.0);
// log of the same, accurate far into the tail (where EI underflows), so optimisers keep a
// gradient; -infinity only for zero variance without improvement.
double LogExpectedImprovement(double mean, double variance, double best, double xi = 0.0);

}  // namespace trainyard::tuning
