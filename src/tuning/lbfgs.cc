#include "tuning/lbfgs.h"

#include <cmath>
#include <deque>

namespace trainyard::tuning {

LbfgsResult MinimizeLbfgs(const Objective& f, const Eigen::VectorXd& x0,
                          const LbfgsOptions& options) {
  const Eigen::Index n = x0.size();
  LbfgsResult r;
  r.x = x0;
  Eigen::VectorXd g(n);
  r.value = f(r.x, &g);
  if (!std::isfinite(r.value) || !g.allFinite()) return r;

  std::deque<Eigen::VectorXd> s_hist, y_hist;
  std::deque<double> rho_hist;
  Eigen::VectorXd x_new(n), g_new(n);
  for (r.iterations = 0; r.iterations < options.max_iterations; ++r.iterations) {
    if (g.cwiseAbs().maxCoeff() < options.gradient_tolerance) break;
    // Two-loop recursion: d = -H g.
    Eigen::VectorXd q = g;
    std::vector<double> alpha(s_hist.size());
    for (int i = static_cast<int>(s_hist.size()) - 1; i >= 0; --i) {
      alpha[i] = rho_hist[i] * s_hist[i].dot(q);
      q -= alpha[i] * y_hist[i];
    }
    double gamma = 1.0;
    if (!s_hist.empty()) {
      gamma = s_hist.back().dot(y_hist.back()) / y_hist.back().squaredNorm();
    } else {
      gamma = 1.0 / std::max(1.0, g.norm());  // first step: unit length along -g
    }
    q *= gamma;
    for (size_t i = 0; i < s_hist.size(); ++i) {
      double beta = rho_hist[i] * y_hist[i].dot(q);
      q += s_hist[i] * (alpha[i] - beta);
    }
    Eigen::VectorXd d = -q;
    double slope = g.dot(d);
    if (!(slope < 0)) {  // not a descent direction (numerical trouble): restart from -g
      s_hist.clear();
      y_hist.clear();
      rho_hist.clear();
      d = -g / std::max(1.0, g.norm());
      slope = g.dot(d);
    }
    double step = 1.0;
    bool accepted = false;
    double value_new = 0;
    for (int ls = 0; ls < 40; ++ls) {
      x_new = r.x + step * d;
      value_new = f(x_new, &g_new);
      if (std::isfinite(value_new) && g_new.allFinite() &&
          value_new <= r.value + 1e-4 * step * slope) {
        accepted = true;
        break;
      }
      step *= 0.5;
    }
    if (!accepted) break;
    Eigen::VectorXd s = x_new - r.x;
    Eigen::VectorXd y = g_new - g;
    const double improvement = r.value - value_new;
    r.x = x_new;
    g = g_new;
    const double old_value = r.value;
    r.value = value_new;
    const double sy = s.dot(y);
    if (sy > 1e-12) {
      s_hist.push_back(s);
      y_hist.push_back(y);
      rho_hist.push_back(1.0 / sy);
      if (static_cast<int>(s_hist.size()) > options.memory) {
        s_hist.pop_front();
        y_hist.pop_front();
        rho_hist.pop_front();
      }
    }
    if (improvement <= options.relative_tolerance * std::max(1.0, std::fabs(old_value))) break;
  }
  return r;
}

}  // namespace trainyard::tuning
