#include "tuning/bayesian_searcher.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tuning/output_warping.h"
#include "tuning/searcher_state.h"

namespace trainyard::tuning {
namespace {

constexpr uint64_t kInitialStream = 11;
constexpr uint64_t kCandidateStream = 12;
constexpr uint64_t kFitStream = 13;
constexpr int kTopPoints = 5;

double LogEiAt(const GaussianProcess& gp, const Eigen::VectorXd& x, double best, double xi) {
  GaussianProcess::Prediction p = gp.Predict(x.transpose());
  return LogExpectedImprovement(p.mean[0], p.variance[0], best, xi);
}

// Projected gradient ascent of log EI over the columns `cols` of x, inside [0, 1]. Central
// differences: the space has few numeric columns and one prediction costs O(N²).
Eigen::VectorXd RefineLocally(const GaussianProcess& gp, Eigen::VectorXd x,
                              const std::vector<int>& cols, double best, double xi) {
  if (cols.empty()) return x;
  double fx = LogEiAt(gp, x, best, xi);
  if (!std::isfinite(fx)) return x;
  double step = 0.05;
  constexpr double kH = 1e-5;
  Eigen::VectorXd g(cols.size());
  for (int iter = 0; iter < 40 && step > 1e-6; ++iter) {
    for (size_t k = 0; k < cols.size(); ++k) {
      Eigen::VectorXd xp = x, xm = x;
      xp[cols[k]] = std::min(1.0, x[cols[k]] + kH);
      xm[cols[k]] = std::max(0.0, x[cols[k]] - kH);
      const double span = xp[cols[k]] - xm[cols[k]];
      const double fp = LogEiAt(gp, xp, best, xi);
      const double fm = LogEiAt(gp, xm, best, xi);
      g[static_cast<Eigen::Index>(k)] =
          (std::isfinite(fp) && std::isfinite(fm) && span > 0) ? (fp - fm) / span : 0.0;
    }
    const double norm = g.norm();
    if (!(norm > 1e-12)) break;
    bool improved = false;
    while (step > 1e-6) {
      Eigen::VectorXd xn = x;
      for (size_t k = 0; k < cols.size(); ++k) {
        xn[cols[k]] =
            std::clamp(x[cols[k]] + step * g[static_cast<Eigen::Index>(k)] / norm, 0.0, 1.0);
      }
      const double fn = LogEiAt(gp, xn, best, xi);
      if (std::isfinite(fn) && fn > fx) {
        x = xn;
        fx = fn;
        step *= 1.5;
        improved = true;
        break;
      }
      step *= 0.5;
    }
    if (!improved) break;
  }
  return x;
}

// The side of the trust region (in units of the [0, 1] encoding, before the per-column length
// scale weights) after the observations `ys` (goal-signed, in trial order; the first `initial`
// are the random design): TuRBO's rule (Eriksson et al., NeurIPS 2019) replayed over the
// history, so it needs no state of its own and survives a restore — start at 0.8, double after
// 3 improvements in a row (at most 1.6), halve after max(4, D) / 2 trials without one, start
// over at 0.8 below 2^-7.
double TrustRegionSide(const std::vector<double>& ys, int initial, int dim, int failures_allowed) {
  const int fail_tolerance =
      failures_allowed > 0 ? failures_allowed : std::max(2, (std::max(4, dim) + 1) / 2);
  double side = 0.8, best = -std::numeric_limits<double>::infinity();
  int successes = 0, failures = 0;
  for (size_t k = 0; k < ys.size(); ++k) {
    if (static_cast<int>(k) >= initial) {
      if (ys[k] > best + 1e-3 * std::abs(best)) {
        ++successes, failures = 0;
      } else {
        ++failures, successes = 0;
      }
      if (successes == 3) side = std::min(2 * side, 1.6), successes = 0;
      if (failures == fail_tolerance) side /= 2, failures = 0;
      if (side < 1.0 / 128) side = 0.8;
    }
    best = std::max(best, ys[k]);
  }
  return side;
}

}  // namespace

BayesianSearcher::BayesianSearcher(const StudySpec& spec, uint64_t seed, BayesianOptions options)
    : space_(spec),
      seed_(seed),
      options_(options),
      goal_sign_(!spec.metrics.empty() && spec.metrics[0].goal == Goal::kMinimize ? -1.0 : 1.0) {
  initial_trials_ = options_.initial_trials > 0
                        ? options_.initial_trials
                        : std::max(10, std::min(20, space_.FeatureDim() + 1));
}

ParameterSet BayesianSearcher::RandomDraw(const std::set<std::string>& taken) {
  ParameterSet set;
  for (int attempt = 0; attempt <= 100; ++attempt) {
    Rng rng = Rng::For(seed_, kInitialStream, suggestions_++);
    set = space_.Sample(rng);
    if (!taken.count(SearchSpace::Key(set))) break;
  }
  return set;
}

void BayesianSearcher::LimitObservations(std::vector<Eigen::VectorXd>& xs,
                                         std::vector<double>& ys) const {
  const size_t cap = static_cast<size_t>(std::max(2, options_.max_gp_observations));
  if (ys.size() <= cap) return;
  std::vector<size_t> by_value(ys.size());
  std::iota(by_value.begin(), by_value.end(), 0);
  std::stable_sort(by_value.begin(), by_value.end(),
                   [&](size_t a, size_t b) { return goal_sign_ * ys[a] > goal_sign_ * ys[b]; });
  std::vector<bool> keep(ys.size(), false);
  for (size_t k = 0; k < cap / 2; ++k) keep[by_value[k]] = true;
  size_t kept = cap / 2;
  for (size_t i = ys.size(); i-- > 0 && kept < cap;) {
    if (!keep[i]) keep[i] = true, ++kept;
  }
  std::vector<Eigen::VectorXd> kx;
  std::vector<double> ky;
  for (size_t i = 0; i < ys.size(); ++i) {
    if (!keep[i]) continue;
    kx.push_back(std::move(xs[i]));
    ky.push_back(ys[i]);
  }
  xs = std::move(kx);
  ys = std::move(ky);
}

namespace {

// Numeric columns `cols` of x clamped into the box (categorical ones are not boxed).
Eigen::VectorXd ClampIn(Eigen::VectorXd x, const std::vector<int>& cols, const CandidateBox* box) {
  if (box == nullptr) return x;
  for (int c : cols) x[c] = std::clamp(x[c], box->lo[c], box->hi[c]);
  return x;
}

}  // namespace

std::vector<Eigen::VectorXd> BayesianSearcher::Candidates(const std::vector<Eigen::VectorXd>& top,
                                                          Rng& rng, const CandidateBox* box) const {
  std::vector<Eigen::VectorXd> cands;
  cands.reserve(options_.random_candidates + top.size() * options_.local_candidates_per_point);
  for (int i = 0; i < options_.random_candidates; ++i) {
    Eigen::VectorXd x = space_.Encode(space_.Sample(rng));
    if (box != nullptr) {
      for (int c : space_.NumericColumns(space_.Decode(x))) {
        x[c] = box->lo[c] + (box->hi[c] - box->lo[c]) * rng.Uniform();
      }
      x = space_.Encode(space_.Decode(x));
    }
    cands.push_back(std::move(x));
  }
  for (const Eigen::VectorXd& t : top) {
    const std::vector<int> cols = space_.NumericColumns(space_.Decode(t));
    for (int k = 0; k < options_.local_candidates_per_point; ++k) {
      const double scale = (k % 3 == 0) ? 0.15 : (k % 3 == 1 ? 0.05 : 0.01);
      Eigen::VectorXd x = t;
      for (int c : cols) x[c] = std::clamp(x[c] + scale * rng.Normal(), 0.0, 1.0);
      cands.push_back(space_.Encode(space_.Decode(ClampIn(x, cols, box))));
    }
    // The same good point under each other value of each categorical parameter: random
    // candidates rarely pair another category with good numeric values, so without these a
    // study that found one good category early never learns whether another is better.
    for (const SpaceNode& node : space_.nodes()) {
      if (node.spec.type != ParameterType::kCategorical || node.feature_width < 2) continue;
      for (int v = 0; v < node.feature_width; ++v) {
        if (t[node.feature_offset + v] > 0.5) continue;  // its own value
        Eigen::VectorXd x = t;
        x.segment(node.feature_offset, node.feature_width).setZero();
        x[node.feature_offset + v] = 1.0;
        cands.push_back(space_.Encode(space_.Decode(x)));
      }
    }
  }
  return cands;
}

std::optional<ParameterSet> BayesianSearcher::MaximizeExpectedImprovement(
    const GaussianProcess& gp, double best, double xi, const std::vector<Eigen::VectorXd>& top,
    const std::set<std::string>& taken, Rng& rng, const CandidateBox* box) const {
  const int dim = space_.FeatureDim();
  const std::vector<Eigen::VectorXd> cands = Candidates(top, rng, box);
  Eigen::MatrixXd xs(static_cast<Eigen::Index>(cands.size()), dim);
  for (size_t i = 0; i < cands.size(); ++i)
    xs.row(static_cast<Eigen::Index>(i)) = cands[i].transpose();
  const GaussianProcess::Prediction pred = gp.Predict(xs);
  std::vector<double> score(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) {
    score[i] = LogExpectedImprovement(pred.mean[static_cast<Eigen::Index>(i)],
                                      pred.variance[static_cast<Eigen::Index>(i)], best, xi);
  }
  std::vector<size_t> order(cands.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return score[a] > score[b]; });

  std::optional<ParameterSet> chosen;
  double chosen_score = -std::numeric_limits<double>::infinity();
  std::set<std::string> refined_keys;
  for (size_t idx : order) {
    if (static_cast<int>(refined_keys.size()) >= options_.refined_candidates) break;
    ParameterSet set = space_.Decode(cands[idx]);
    std::string key = SearchSpace::Key(set);
    if (taken.count(key) || !refined_keys.insert(key).second) continue;
    if (score[idx] > chosen_score) {
      chosen = set;
      chosen_score = score[idx];
    }
    const std::vector<int> cols = space_.NumericColumns(set);
    Eigen::VectorXd x = ClampIn(RefineLocally(gp, cands[idx], cols, best, xi), cols, box);
    ParameterSet refined = space_.Decode(x);
    if (taken.count(SearchSpace::Key(refined))) continue;
    const double s = LogEiAt(gp, space_.Encode(refined), best, xi);
    if (s > chosen_score) {
      chosen = std::move(refined);
      chosen_score = s;
    }
  }
  return chosen;
}

// Longer than a screen on purpose: one batch loop over state every step shares — the GP, its
// data with the liars appended as the batch grows, the incumbent and the taken keys — where
// splitting would pass all of it through each piece. The pieces that stand alone are separate
// (RandomDraw, MaximizeExpectedImprovement, FitGpHyperparameters, GaussianProcess::Condition).
StatusOr<Suggestions> BayesianSearcher::Suggest(int count, const SearchHistory& history) {
  std::set<std::string> taken;
  for (const Observation& o : history.completed) taken.insert(SearchSpace::Key(o.parameters));
  for (const ParameterSet& p : history.pending) taken.insert(SearchSpace::Key(p));

  std::vector<Eigen::VectorXd> xs;
  std::vector<double> ys;
  for (const Observation& o : history.completed) {
    if (!o.objective || !std::isfinite(*o.objective)) continue;
    xs.push_back(space_.Encode(o.parameters));
    ys.push_back(*o.objective);
  }
  LimitObservations(xs, ys);
  const int existing = static_cast<int>(history.completed.size() + history.pending.size());

  Suggestions out;
  std::optional<GaussianProcess> gp;
  Eigen::MatrixXd gx;
  Eigen::VectorXd gy;
  double best = 0, worst = 0;
  Eigen::Index observed = 0;  // rows of gx that are real observations (the rest are liars)
  // The value a not-yet-observed point (pending trial or earlier batch member) is given.
  auto lie_at = [&](const Eigen::VectorXd& x) -> double {
    switch (options_.liar) {
      case Liar::kBest:
        return best;
      case Liar::kWorst:
        return worst;
      case Liar::kMean:
        return 0.0;  // the objective is standardised
      case Liar::kKrigingBeliever:
        break;
    }
    if (!gp) return 0.0;
    return gp->Predict(x.transpose()).mean[0];
  };
  std::vector<Eigen::VectorXd> top;
  std::optional<CandidateBox> box;  // the trust region, when options_.trust_region
  bool model_failed = false;
  for (int i = 0; i < count; ++i) {
    const int index = existing + i;  // the trial this proposal becomes
    const bool explore = options_.random_every > 0 && index >= initial_trials_ &&
                         index % options_.random_every == options_.random_every - 1;
    if (ys.size() < 2 || index < initial_trials_ || model_failed || explore) {
      ParameterSet set = RandomDraw(taken);
      taken.insert(SearchSpace::Key(set));
      if (gp) {  // a liar for the random point too
        const Eigen::VectorXd enc = space_.Encode(set);
        gx.conservativeResize(gx.rows() + 1, Eigen::NoChange);
        gx.row(gx.rows() - 1) = enc.transpose();
        gy.conservativeResize(gy.size() + 1);
        gy[gy.size() - 1] = lie_at(enc);
        best = std::max(best, gy[gy.size() - 1]);
      }
      out.parameter_sets.push_back(std::move(set));
      continue;
    }
    if (!gp) {
      // Standardise (the caller passes objectives in the metric's sense; goal_sign_ flips
      // MINIMIZE so that the GP always maximises).
      const int n = static_cast<int>(ys.size());
      Eigen::VectorXd y(n);
      for (int k = 0; k < n; ++k) y[k] = goal_sign_ * ys[static_cast<size_t>(k)];
      if (options_.warp_outputs) {
        y = WarpOutputs(y).values;
      } else {
        const double mean = y.mean();
        const double sd = std::sqrt((y.array() - mean).square().sum() / n);
        y = (y.array() - mean) / (sd > 1e-12 ? sd : 1.0);
      }
      Eigen::MatrixXd x(n, space_.FeatureDim());
      for (int k = 0; k < n; ++k) x.row(k) = xs[static_cast<size_t>(k)].transpose();
      GpFitOptions fit;
      fit.seed = Rng::For(seed_, kFitStream, suggestions_).Next();
      fit.random_starts = options_.fit_random_starts;
      fit.length_scale_prior = options_.length_scale_prior;
      fit.warm_start = last_fit_;
      StatusOr<GpHyperparameters> hp = FitGpHyperparameters(x, y, fit);
      if (!hp.ok()) {
        model_failed = true;
        --i;
        continue;
      }
      last_fit_ = *hp;
      observed = n;
      best = y.maxCoeff();
      worst = y.minCoeff();
      std::vector<int> idx(n);
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return y[a] > y[b]; });
      for (int k = 0; k < std::min(n, kTopPoints); ++k) top.push_back(x.row(idx[k]).transpose());
      if (options_.trust_region) {
        std::vector<double> signed_ys(ys.size());
        for (size_t k = 0; k < ys.size(); ++k) signed_ys[k] = goal_sign_ * ys[k];
        const double side = TrustRegionSide(signed_ys, initial_trials_, space_.FeatureDim(),
                                            options_.trust_region_failures);
        // Per-column sides follow the fitted length scales (normalised to geometric mean 1).
        const Eigen::ArrayXd ls = last_fit_->length_scales.array();
        const Eigen::ArrayXd w = ls / std::exp(ls.log().mean());
        const Eigen::ArrayXd center = x.row(idx[0]).transpose().array();
        box = CandidateBox{(center - 0.5 * side * w).max(0.0).matrix(),
                           (center + 0.5 * side * w).min(1.0).matrix()};
      }
      // Pending trials and this batch's earlier points enter as liars (a kriging believer
      // asks the model of the real observations).
      gx = x;
      gy = y;
      StatusOr<GaussianProcess> real = GaussianProcess::Condition(gx, gy, *last_fit_);
      if (real.ok()) gp = std::move(*real);
      std::vector<ParameterSet> unobserved = history.pending;
      unobserved.insert(unobserved.end(), out.parameter_sets.begin(), out.parameter_sets.end());
      const int extra = static_cast<int>(unobserved.size());
      gx.conservativeResize(n + extra, Eigen::NoChange);
      gy.conservativeResize(n + extra);
      for (int k = 0; k < extra; ++k) {
        const Eigen::VectorXd enc = space_.Encode(unobserved[static_cast<size_t>(k)]);
        gx.row(n + k) = enc.transpose();
        gy[n + k] = lie_at(enc);
        // A believed value above the incumbent becomes the incumbent, else EI would keep
        // rewarding the believed point itself and the batch would collapse onto it.
        best = std::max(best, gy[n + k]);
      }
    }
    StatusOr<GaussianProcess> conditioned = GaussianProcess::Condition(gx, gy, *last_fit_);
    std::optional<ParameterSet> proposal;
    if (conditioned.ok()) {
      gp = std::move(*conditioned);
      Rng rng = Rng::For(seed_, kCandidateStream, suggestions_++);
      // Next to a believed point, EI without a margin still rewards a hair's breadth of
      // believed improvement: batch members and proposals beside running trials keep one.
      const double xi = gx.rows() > observed ? options_.batch_xi : options_.xi;
      proposal = MaximizeExpectedImprovement(*gp, best, xi, top, taken, rng, box ? &*box : nullptr);
    }
    if (!proposal) proposal = RandomDraw(taken);
    taken.insert(SearchSpace::Key(*proposal));
    const Eigen::VectorXd enc = space_.Encode(*proposal);
    gx.conservativeResize(gx.rows() + 1, Eigen::NoChange);
    gx.row(gx.rows() - 1) = enc.transpose();
    gy.conservativeResize(gy.size() + 1);
    gy[gy.size() - 1] = lie_at(enc);
    best = std::max(best, gy[gy.size() - 1]);
    out.parameter_sets.push_back(std::move(*proposal));
  }
  return out;
}

nlohmann::json BayesianSearcher::SaveState() const {
  nlohmann::json j = {{"searcher", "bayesian"},
                      {"seed", std::to_string(seed_)},
                      {"suggestions", std::to_string(suggestions_)}};
  if (last_fit_) {
    std::vector<double> ls(last_fit_->length_scales.data(),
                           last_fit_->length_scales.data() + last_fit_->length_scales.size());
    j["gpHyperparameters"] = {{"lengthScales", ls},
                              {"signalVariance", last_fit_->signal_variance},
                              {"noiseVariance", last_fit_->noise_variance}};
  }
  return j;
}

Status BayesianSearcher::RestoreState(const nlohmann::json& state) {
  TY_RETURN_IF_ERROR(CheckSearcherKind(state, "bayesian"));
  TY_ASSIGN_OR_RETURN(uint64_t seed, ReadStateCounter(state, "seed"));
  TY_ASSIGN_OR_RETURN(uint64_t suggestions, ReadStateCounter(state, "suggestions"));
  std::optional<GpHyperparameters> fit;
  if (auto it = state.find("gpHyperparameters"); it != state.end()) {
    try {
      std::vector<double> ls = it->at("lengthScales").get<std::vector<double>>();
      if (static_cast<int>(ls.size()) != space_.FeatureDim()) {
        return InvalidArgumentError(
            "searcherState.gpHyperparameters.lengthScales: " + std::to_string(ls.size()) +
            " values for a space of " + std::to_string(space_.FeatureDim()) + " features");
      }
      GpHyperparameters hp;
      hp.length_scales =
          Eigen::Map<Eigen::VectorXd>(ls.data(), static_cast<Eigen::Index>(ls.size()));
      hp.signal_variance = it->at("signalVariance").get<double>();
      hp.noise_variance = it->at("noiseVariance").get<double>();
      fit = hp;
    } catch (const nlohmann::json::exception& e) {
      return InvalidArgumentError(std::string("searcherState.gpHyperparameters: ") + e.what());
    }
  }
  seed_ = seed;
  suggestions_ = suggestions;
  last_fit_ = fit;
  return Status::Ok();
}

}  // namespace trainyard::tuning
