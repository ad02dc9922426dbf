// Output warping for the Gaussian process of BayesianSearcher: objective values are standardised
// and then passed through a Yeo-Johnson power transform (Yeo & Johnson, Biometrika 2000) whose λ
// maximises the Gaussian likelihood of the transformed values, then standardised again.
//
// Why: a GP assumes roughly Gaussian outputs, and typical objectives are not — a validation loss
// or a test function like Branin has a long tail of bad values (Branin spans 0.4 .. 300). The
// tail then sets the scale, the GP's length scales shrink to fit it, and the region near the
// optimum, where the values differ by little, looks flat. Compressing the tail (λ > 1 on the
// maximised, negated-loss side) gives the good region its resolution back. HEBO (Cowen-Rivers et
// al., JAIR 2022) found the same transform the most useful single change to GP-based HPO.
#pragma once

#include <Eigen/Core>

namespace trainyard::tuning {

// The Yeo-Johnson transform of one value.
double YeoJohnson(double y, double lambda);

// The log-likelihood (up to a constant) of λ for values `y`: -n/2 ln var(ψ_λ(y)) +
// (λ - 1) Σ sign(y_i) ln(1 + |y_i|).
double YeoJohnsonLogLikelihood(const Eigen::VectorXd& y, double lambda);

struct WarpedOutputs {
  Eigen::VectorXd values;  // transformed and standardised (mean 0, sd 1 unless all equal)
  double lambda = 1.0;     // 1: the identity (values were only standardised)
};

// Standardises `y`, fits λ in [-2, 4] by golden-section search on the log-likelihood, transforms
// and standardises again. Order-preserving (the transform is monotone), so the best observation
// stays the best. Deterministic. With fewer than 3 distinct values only standardises.
WarpedOutputs WarpOutputs(const Eigen::VectorXd& y);

}  // namespace trainyard::tuning
