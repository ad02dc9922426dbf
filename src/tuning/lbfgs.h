// A small limited-memory BFGS minimiser (Nocedal & Wright, Algorithm 7.4 with a backtracking
// Armijo line search). Used to fit GP hyperparameters; problems have < 50 variables.
#pragma once

#include <Eigen/Core>
#include <functional>

namespace trainyard::tuning {

struct LbfgsOptions {
  int max_iterations = 100;
  int memory = 7;
  double gradient_tolerance = 1e-6;   // stop when max |g_i| falls below
  double relative_tolerance = 1e-10;  // stop when the value improves by less than this, relatively
};

struct LbfgsResult {
  Eigen::VectorXd x;
  double value = 0;
  int iterations = 0;
};

// Minimises f from x0. `f` returns f(x) and writes its gradient into *grad (sized like x). A
// non-finite value is treated as "outside the domain": the line search backs off from it. Never
// returns a point worse than x0.
using Objective = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd* grad)>;
LbfgsResult MinimizeLbfgs(const Objective& f, const Eigen::VectorXd& x0,
                          const LbfgsOptions& options = {});

}  // namespace trainyard::tuning
