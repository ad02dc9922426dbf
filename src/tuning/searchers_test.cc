#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tuning/bayesian_searcher.h"
#include "tuning/grid_searcher.h"
#include "tuning/random_searcher.h"
#include "tuning/study_spec_json.h"
#include "tuning/study_spec_validate.h"

namespace trainyard::tuning {
namespace {

StudySpec Spec(const std::string& json_text) {
  StatusOr<StudySpec> s = ParseStudySpec(nlohmann::json::parse(json_text));
  EXPECT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(ValidateStudySpec(*s).ok()) << ValidateStudySpec(*s);
  return *s;
}

std::string Render(const ParameterSet& set) { return SearchSpace::Key(set); }

double Num(const ParameterSet& set, const std::string& id) {
  const ParameterValue* v = FindParameter(set, id);
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  return std::get<double>(*v);
}

// Grid: 2 optimisers, "sgd" expands into 3 momentum values; lr stepped 0.1..0.3; units {1..2}.
// Size = 3 (lr) * 2 (units) * (1 + 3) (optimizer subtree) = 24.
constexpr char kGridSpec[] = R"({
  "metrics": [{"metricId": "m", "goal": "MAXIMIZE"}], "algorithm": "GRID_SEARCH",
  "parameters": [
    {"parameterId": "lr", "doubleValueSpec": {"minValue": 0.1, "maxValue": 0.3, "gridStep": 0.1}},
    {"parameterId": "units", "integerValueSpec": {"minValue": 1, "maxValue": 2}},
    {"parameterId": "opt", "categoricalValueSpec": {"values": ["adam", "sgd"]},
     "conditionalParameterSpecs": [{"parentCategoricalValues": {"values": ["sgd"]},
        "parameterSpec": {"parameterId": "momentum", "discreteValueSpec": {"values": [0, 0.5, 0.9]}}}]}
  ]})";

TEST(GridSearcherTest, CoversTheSpaceExactlyInOrderThenReportsExhaustion) {
  GridSearcher grid(Spec(kGridSpec));
  EXPECT_EQ(grid.Size(), 24u);
  std::vector<std::string> points;
  SearchHistory none;
  for (int call = 0; call < 10; ++call) {
    StatusOr<Suggestions> s = grid.Suggest(5, none);
    ASSERT_TRUE(s.ok());
    for (const ParameterSet& p : s->parameter_sets) points.push_back(Render(p));
    if (s->exhausted) break;
  }
  ASSERT_EQ(points.size(), 24u);
  EXPECT_EQ(std::set<std::string>(points.begin(), points.end()).size(), 24u);
  // Build the expected product independently.
  std::set<std::string> expected;
  for (const char* lr : {"0.1", "0.2", "0.3"}) {
    for (const char* u : {"1", "2"}) {
      std::string base = std::string("lr=") + lr + ";units=" + u + ";";
      expected.insert(base + "opt=adam;");
      for (const char* m : {"0", "0.5", "0.9"})
        expected.insert(base + "opt=sgd;momentum=" + m + ";");
    }
  }
  EXPECT_EQ(std::set<std::string>(points.begin(), points.end()), expected);
  EXPECT_EQ(points.front(), "lr=0.1;units=1;opt=adam;");
  EXPECT_EQ(points[1], "lr=0.1;units=1;opt=sgd;momentum=0;");
  StatusOr<Suggestions> after = grid.Suggest(3, none);
  EXPECT_TRUE(after->exhausted && after->parameter_sets.empty());
}

TEST(GridSearcherTest, ResumesFromSavedState) {
  GridSearcher a(Spec(kGridSpec)), b(Spec(kGridSpec));
  SearchHistory none;
  ASSERT_TRUE(a.Suggest(7, none).ok());
  ASSERT_TRUE(b.RestoreState(a.SaveState()).ok());
  EXPECT_EQ(Render(a.Suggest(1, none)->parameter_sets[0]),
            Render(b.Suggest(1, none)->parameter_sets[0]));
  EXPECT_FALSE(b.RestoreState({{"searcher", "random"}}).ok());
}

constexpr char kScaleSpec[] = R"({
  "metrics": [{"metricId": "m", "goal": "MAXIMIZE"}], "algorithm": "RANDOM_SEARCH",
  "parameters": [
    {"parameterId": "log", "doubleValueSpec": {"minValue": 0.001, "maxValue": 10}, "scaleType": "UNIT_LOG_SCALE"},
    {"parameterId": "lin", "doubleValueSpec": {"minValue": 0.001, "maxValue": 10}, "scaleType": "UNIT_LINEAR_SCALE"},
    {"parameterId": "rev", "doubleValueSpec": {"minValue": 0.001, "maxValue": 10}, "scaleType": "UNIT_REVERSE_LOG_SCALE"},
    {"parameterId": "ilog", "integerValueSpec": {"minValue": 1, "maxValue": 1000}, "scaleType": "UNIT_LOG_SCALE"},
    {"parameterId": "kind", "categoricalValueSpec": {"values": ["a", "b"]},
     "conditionalParameterSpecs": [{"parentCategoricalValues": {"values": ["b"]},
        "parameterSpec": {"parameterId": "only_b", "integerValueSpec": {"minValue": 0, "maxValue": 3}}}]}
  ]})";

TEST(RandomSearcherTest, HonoursScalesConditionsAndSeed) {
  RandomSearcher r(Spec(kScaleSpec), 42);
  StatusOr<Suggestions> s = r.Suggest(4000, {});
  ASSERT_TRUE(s.ok());
  int log_below_0_1 = 0, lin_below_0_1 = 0, rev_above_9_99 = 0, ilog_below_32 = 0, b = 0;
  for (const ParameterSet& p : s->parameter_sets) {
    log_below_0_1 += Num(p, "log") < 0.1;    // log scale: 2 of 4 decades -> 50%
    lin_below_0_1 += Num(p, "lin") < 0.1;    // linear: ~1%
    rev_above_9_99 += Num(p, "rev") > 9.99;  // reverse log mirrors log: 10 - x < 0.01 -> 25%
    ilog_below_32 += Num(p, "ilog") < 31.5;  // log over [0.5, 1000.5]: ~55%
    const bool is_b = std::get<std::string>(*FindParameter(p, "kind")) == "b";
    b += is_b;
    EXPECT_EQ(FindParameter(p, "only_b") != nullptr, is_b) << Render(p);
    EXPECT_TRUE(Num(p, "log") >= 0.001 && Num(p, "log") <= 10);
  }
  EXPECT_NEAR(log_below_0_1 / 4000.0, 0.5, 0.03);
  EXPECT_NEAR(lin_below_0_1 / 4000.0, 0.01, 0.006);
  EXPECT_NEAR(rev_above_9_99 / 4000.0, 0.25, 0.03);
  EXPECT_NEAR(ilog_below_32 / 4000.0, std::log(31.5 / 0.5) / std::log(1000.5 / 0.5), 0.03);
  EXPECT_NEAR(b / 4000.0, 0.5, 0.03);

  RandomSearcher same(Spec(kScaleSpec), 42), other(Spec(kScaleSpec), 43);
  const std::string first = Render(same.Suggest(1, {})->parameter_sets[0]);
  EXPECT_EQ(first, Render(s->parameter_sets[0]));
  EXPECT_NE(first, Render(other.Suggest(1, {})->parameter_sets[0]));
}

constexpr char kOneDim[] = R"({
  "metrics": [{"metricId": "m", "goal": "MAXIMIZE"}],
  "parameters": [{"parameterId": "x", "doubleValueSpec": {"minValue": 0, "maxValue": 1}}]})";

// A 1-D GP on three observations (x 0.1, 0.45, 0.9; the best, 0.8, at 0.45).
StatusOr<GaussianProcess> ThreePointGp() {
  Eigen::MatrixXd x(3, 1);
  x << 0.1, 0.45, 0.9;
  Eigen::VectorXd y(3);
  y << -1.0, 0.8, 0.1;
  GpHyperparameters hp;
  hp.length_scales = Eigen::VectorXd::Constant(1, 0.2);
  hp.noise_variance = 1e-6;
  return GaussianProcess::Condition(x, y, hp);
}

// The searcher's EI maximiser against a dense grid on a 1-D GP with three observations.
TEST(BayesianSearcherTest, MaximisesExpectedImprovementToTheKnownOptimum) {
  BayesianSearcher searcher(Spec(kOneDim), 1);
  StatusOr<GaussianProcess> gp = ThreePointGp();
  ASSERT_TRUE(gp.ok());
  const Eigen::MatrixXd& x = gp->x();
  double best_x = 0, best_ei = -1;
  for (int i = 0; i <= 100000; ++i) {
    Eigen::MatrixXd q(1, 1);
    q(0, 0) = i / 100000.0;
    auto p = gp->Predict(q);
    double ei = ExpectedImprovement(p.mean[0], p.variance[0], 0.8, 0.01);
    if (ei > best_ei) {
      best_ei = ei;
      best_x = q(0, 0);
    }
  }
  Rng rng(5);
  std::vector<Eigen::VectorXd> top = {x.row(1).transpose()};
  std::optional<ParameterSet> found =
      searcher.MaximizeExpectedImprovement(*gp, 0.8, 0.01, top, {}, rng);
  ASSERT_TRUE(found.has_value());
  EXPECT_NEAR(Num(*found, "x"), best_x, 2e-3);
}

// With a trust region, EI's proposal stays in the box even where EI is larger outside it.
TEST(BayesianSearcherTest, TheProposalStaysInTheTrustRegion) {
  BayesianSearcher searcher(Spec(kOneDim), 1);
  StatusOr<GaussianProcess> gp = ThreePointGp();
  ASSERT_TRUE(gp.ok());
  const Eigen::MatrixXd& x = gp->x();
  Rng rng(5);
  std::vector<Eigen::VectorXd> top = {x.row(1).transpose()};
  CandidateBox box{Eigen::VectorXd::Constant(1, 0.40), Eigen::VectorXd::Constant(1, 0.44)};
  std::optional<ParameterSet> boxed =
      searcher.MaximizeExpectedImprovement(*gp, 0.8, 0.0, top, {}, rng, &box);
  std::optional<ParameterSet> free =
      searcher.MaximizeExpectedImprovement(*gp, 0.8, 0.0, top, {}, rng);
  ASSERT_TRUE(boxed.has_value() && free.has_value());
  EXPECT_GE(Num(*boxed, "x"), 0.40);
  EXPECT_LE(Num(*boxed, "x"), 0.44);
  EXPECT_GT(std::abs(Num(*free, "x") - 0.42), 0.03) << "the test needs EI's optimum outside";
}

constexpr char kTwoDim[] = R"({
  "metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
  "parameters": [{"parameterId": "a", "doubleValueSpec": {"minValue": -2, "maxValue": 2}},
                 {"parameterId": "b", "integerValueSpec": {"minValue": -5, "maxValue": 5}},
                 {"parameterId": "c", "categoricalValueSpec": {"values": ["p", "q", "r"]}}]})";

double Loss(const ParameterSet& p) {
  const double a = Num(p, "a"), b = Num(p, "b");
  const double c = std::get<std::string>(*FindParameter(p, "c")) == "q" ? 0.0 : 1.0;
  return (a - 0.7) * (a - 0.7) + 0.1 * (b + 2) * (b + 2) + c;
}

SearchHistory Observe(const std::vector<ParameterSet>& sets) {
  SearchHistory h;
  for (const ParameterSet& p : sets) h.completed.push_back({p, Loss(p)});
  return h;
}

TEST(BayesianSearcherTest, LiarBatchesAreDistinctFromEachOtherAndFromHistory) {
  for (Liar liar : {Liar::kKrigingBeliever, Liar::kBest, Liar::kMean, Liar::kWorst}) {
    BayesianOptions options;
    options.liar = liar;
    BayesianSearcher searcher(Spec(kTwoDim), 9, options);
    RandomSearcher init(Spec(kTwoDim), 3);
    SearchHistory h = Observe(init.Suggest(8, {})->parameter_sets);
    h.pending = init.Suggest(2, {})->parameter_sets;
    StatusOr<Suggestions> s = searcher.Suggest(4, h);
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(s->parameter_sets.size(), 4u);
    std::set<std::string> keys;
    for (const auto& o : h.completed) keys.insert(Render(o.parameters));
    for (const auto& p : h.pending) keys.insert(Render(p));
    for (const ParameterSet& p : s->parameter_sets) {
      EXPECT_TRUE(keys.insert(Render(p)).second) << Render(p) << " liar " << static_cast<int>(liar);
    }
    EXPECT_TRUE(searcher.last_fit().has_value());
  }
}

// With a fitted model, a kriging-believer batch spreads out: the 4 proposals are not all in
// one spot (the variance collapse around each earlier proposal moves the next one away).
// Issue 43: a study whose trials all fail must not make each suggestion dearer. Failed trials
// never reach the GP, and valued ones are cut to max_gp_observations.
TEST(BayesianSearcherTest, ManyObservationsAndFailuresStillGiveDistinctProposals) {
  RandomSearcher random(Spec(kTwoDim), 3);
  StatusOr<Suggestions> drawn = random.Suggest(300, {});
  ASSERT_TRUE(drawn.ok()) << drawn.status();
  SearchHistory h = Observe(drawn->parameter_sets);
  for (size_t i = 0; i < 2000; ++i) h.completed.push_back({drawn->parameter_sets[i % 300], {}});
  BayesianOptions options;
  options.max_gp_observations = 30;
  BayesianSearcher searcher(Spec(kTwoDim), 5, options);
  StatusOr<Suggestions> s = searcher.Suggest(2, h);
  ASSERT_TRUE(s.ok()) << s.status();
  std::set<std::string> keys;
  for (const auto& o : h.completed) keys.insert(Render(o.parameters));
  int fresh = 0;
  for (const auto& p : s->parameter_sets) fresh += keys.insert(Render(p)).second ? 1 : 0;
  EXPECT_EQ(fresh, 2);
}

TEST(BayesianSearcherTest, BatchProposalsSpreadOut) {
  BayesianOptions options;
  options.initial_trials = 3;  // a model from the 5 observations on
  BayesianSearcher searcher(Spec(kOneDim), 4, options);
  SearchHistory h;
  for (double x : {0.05, 0.3, 0.5, 0.7, 0.95}) {
    h.completed.push_back({{{"x", x}}, -(x - 0.42) * (x - 0.42)});
  }
  StatusOr<Suggestions> s = searcher.Suggest(4, h);
  ASSERT_TRUE(s.ok());
  std::vector<double> xs;
  for (const ParameterSet& p : s->parameter_sets) xs.push_back(Num(p, "x"));
  std::sort(xs.begin(), xs.end());
  double min_gap = 1;
  for (size_t i = 1; i < xs.size(); ++i) min_gap = std::min(min_gap, xs[i] - xs[i - 1]);
  EXPECT_GT(min_gap, 1e-3);
  // The first proposal exploits the known optimum region.
  EXPECT_NEAR(Num(s->parameter_sets[0], "x"), 0.42, 0.1);
}

// End to end on a small mixed space: GP-EI must find the optimum region (a≈0.7, b=-2, c=q) far
// better than its random initial design, and do it deterministically across save/restore.
TEST(BayesianSearcherTest, ConvergesAndIsDeterministicAcrossRestore) {
  auto run = [](bool restore_midway) {
    auto searcher = std::make_unique<BayesianSearcher>(Spec(kTwoDim), 17);
    SearchHistory h;
    for (int i = 0; i < 25; ++i) {
      if (restore_midway && i == 12) {
        nlohmann::json saved = nlohmann::json::parse(searcher->SaveState().dump());
        searcher = std::make_unique<BayesianSearcher>(Spec(kTwoDim), 0);
        EXPECT_TRUE(searcher->RestoreState(saved).ok());
      }
      StatusOr<Suggestions> s = searcher->Suggest(1, h);
      EXPECT_TRUE(s.ok());
      const ParameterSet& p = s->parameter_sets.at(0);
      h.completed.push_back({p, Loss(p)});
    }
    return h;
  };
  SearchHistory a = run(false), b = run(true);
  std::string ra, rb;
  double best = 1e9;
  for (size_t i = 0; i < a.completed.size(); ++i) {
    ra += Render(a.completed[i].parameters) + "\n";
    rb += Render(b.completed[i].parameters) + "\n";
    best = std::min(best, *a.completed[i].objective);
  }
  EXPECT_EQ(ra, rb);
  EXPECT_LT(best, 0.02);
}

}  // namespace
}  // namespace trainyard::tuning
