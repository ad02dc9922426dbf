// BayesianSearcher: the default algorithm (ALGORITHM_UNSPECIFIED), GP-EI.
//
// Each Suggest:
//  1. While fewer than `initial_trials` trials exist (completed + pending + this batch so far),
//     or fewer than 2 completed trials have a value, proposes random draws (RandomSearcher's
//     sampling, its own random stream).
//  2. Otherwise encodes the completed trials with a value (at most max_gp_observations of them)
//     with SearchSpace (warped numeric columns, one-hot
//     categories), standardises the objective (negated for MINIMIZE, so the GP maximises), fits
//     the Matérn 5/2 ARD hyperparameters by maximum marginal likelihood (warm-started from the
//     previous fit, which is part of the saved state), and maximises expected improvement:
//     random feasible candidates plus perturbations of the best trials, the best few refined by
//     projected gradient ascent on log EI over the numeric columns, then snapped to a feasible
//     point (integers rounded, discrete/categorical snapped).
//  3. Batches and running trials use a liar (Ginsbourger et al. 2010): every pending point and
//     every point already proposed in the batch enters the GP with a believed value (default:
//     the kriging believer, the posterior mean there; see Liar), and the EI incumbent is raised
//     to any believed value above it, so the next proposal moves away. Proposals are distinct
//     from all trials.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuning/gaussian_process.h"
#include "tuning/search_space.h"
#include "tuning/searcher.h"

namespace trainyard::tuning {

// The value given to points proposed but not observed yet (running trials, earlier members of
// the batch). kKrigingBeliever: the current model's posterior mean there (the mean surface stays,
// only the variance collapses around the point, so the next proposal goes to the next most
// promising place). The constant liars: the best / mean / worst observed value.
enum class Liar { kKrigingBeliever, kBest, kMean, kWorst };

struct BayesianOptions {
  Liar liar = Liar::kKrigingBeliever;
  // 0: max(10, min(20, FeatureDim() + 1)). Fewer (D + 1 for small spaces) left a GP fitted on
  // 6 random points to exploit a plateau of a multimodal function (Ackley-5) for the rest of a
  // 60-trial study in some seeds (bench/tuners).
  int initial_trials = 0;
  int random_candidates = 1000;
  int local_candidates_per_point = 60;  // perturbations around each of the best 5 trials
  int refined_candidates = 5;           // candidates refined by gradient ascent
  // EI margin, in standardised objective units. 0 (as BoTorch and Optuna): a positive margin
  // kept the search from refining an optimum it had found (Branin's best after 60 trials
  // 0.415, 0.398 with 0).
  double xi = 0.0;
  // The margin while unobserved points (running trials, earlier batch members) are in the GP
  // as liars: with none, the next batch member lands a hair's breadth from the previous one.
  double batch_xi = 0.01;
  // EI is maximised inside a trust region around the best trial (TuRBO's box, replayed from the
  // history: bayesian_searcher.cc TrustRegionSide) instead of over the whole space. Without it,
  // a GP that cannot explain a rugged function (Ackley-5's plateau) has its largest variance,
  // and so its largest EI, in the corners, and some studies spent all 60 trials there.
  bool trust_region = true;
  // Trials without improvement before the trust region halves (0: max(2, ⌈max(4, D) / 2⌉)).
  int trust_region_failures = 0;
  // Every random_every-th trial after the initial ones is a random draw (0: none).
  int random_every = 0;
  int fit_random_starts = 2;
  // The most observations the GP is fitted on (its fit costs O(N^3), each prediction O(N^2)):
  // beyond it, the best half and the most recent of the rest. Trials without a value (failed,
  // infeasible) never enter the GP, so a study full of failures costs no GP work either; what is
  // left per suggestion grows only with the study's trial count, which create caps at
  // spec::kMaxTrialCount (the taken-keys set of step 3).
  int max_gp_observations = 200;
  // Standardised objectives go through a fitted Yeo-Johnson transform (output_warping.h) before
  // the GP sees them; off: standardised only.
  bool warp_outputs = true;
  GpFitOptions::LengthScalePrior length_scale_prior = GpFitOptions::LengthScalePrior::kGamma;
};

// Bounds on the numeric columns of the encoding that EI's candidates are drawn from.
struct CandidateBox {
  Eigen::VectorXd lo, hi;
};

class BayesianSearcher : public Searcher {
 public:
  BayesianSearcher(const StudySpec& spec, uint64_t seed, BayesianOptions options = {});

  std::string_view Name() const override { return "bayesian"; }
  StatusOr<Suggestions> Suggest(int count, const SearchHistory& history) override;
  nlohmann::json SaveState() const override;
  Status RestoreState(const nlohmann::json& state) override;

  // The hyperparameters of the last fit (for tests and logs).
  const std::optional<GpHyperparameters>& last_fit() const { return last_fit_; }

  // Maximises EI of `gp` over the feasible space: the encoded point with the largest EI that is
  // not in `taken` (keys of SearchSpace::Key). `best` is the incumbent (standardised), `xi` the
  // margin. Exposed
  // for tests.
  std::optional<ParameterSet> MaximizeExpectedImprovement(
      const GaussianProcess& gp, double best, double xi, const std::vector<Eigen::VectorXd>& top,
      const std::set<std::string>& taken, Rng& rng, const CandidateBox* box = nullptr) const;

 private:
  // EI's candidates (encoded): random feasible points (their numeric columns drawn inside `box`
  // when there is one), perturbations of the `top` trials, and each top trial under every other
  // value of each categorical parameter.
  std::vector<Eigen::VectorXd> Candidates(const std::vector<Eigen::VectorXd>& top, Rng& rng,
                                          const CandidateBox* box) const;
  ParameterSet RandomDraw(const std::set<std::string>& taken);
  // Cuts (xs, ys) to options_.max_gp_observations (see there), keeping their order.
  void LimitObservations(std::vector<Eigen::VectorXd>& xs, std::vector<double>& ys) const;

  SearchSpace space_;
  uint64_t seed_;
  BayesianOptions options_;
  double goal_sign_;  // +1 MAXIMIZE, -1 MINIMIZE
  int initial_trials_;
  uint64_t suggestions_ = 0;  // counter for the random streams
  std::optional<GpHyperparameters> last_fit_;
};

}  // namespace trainyard::tuning
