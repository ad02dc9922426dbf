#include "tuning/early_stopping.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tuning/study_spec_json.h"

namespace trainyard::tuning {
namespace {

// A trial with one measurement per (step, value).
Trial Curve(const std::string& id, std::vector<std::pair<int64_t, double>> points,
            std::vector<double> elapsed = {}) {
  Trial t;
  t.id = id;
  t.state = TrialState::kSucceeded;
  for (size_t i = 0; i < points.size(); ++i) {
    Measurement m;
    m.step_count = points[i].first;
    m.metrics = {{"acc", points[i].second}};
    if (i < elapsed.size()) m.elapsed_seconds = elapsed[i];
    t.measurements.push_back(m);
  }
  return t;
}

std::vector<const Trial*> Ptrs(const std::vector<Trial>& v) {
  std::vector<const Trial*> out;
  for (const Trial& t : v) out.push_back(&t);
  return out;
}

// Completed trials' running averages up to step 2: (0.5+0.6)/2=0.55, (0.7+0.8)/2=0.75,
// (0.1+0.3)/2=0.2 -> median 0.55. Their later, better values must not count.
const std::vector<Trial> kCompleted = {Curve("1", {{1, 0.5}, {2, 0.6}, {3, 0.99}}),
                                       Curve("2", {{1, 0.7}, {2, 0.8}, {3, 0.99}}),
                                       Curve("3", {{1, 0.1}, {2, 0.3}, {3, 0.99}})};

TEST(MedianStoppingRuleTest, StopsATrialWhoseBestIsBelowTheMedianRunningAverage) {
  MedianStoppingRule rule({"acc", Goal::kMaximize}, false);
  EXPECT_TRUE(rule.Evaluate(Curve("9", {{1, 0.3}, {2, 0.5}}), Ptrs(kCompleted)).stop);
  // Best 0.56 > 0.55: continues, although its last value is lower.
  EXPECT_FALSE(rule.Evaluate(Curve("9", {{1, 0.56}, {2, 0.4}}), Ptrs(kCompleted)).stop);
  // Exactly the median: "strictly below" is required.
  EXPECT_FALSE(rule.Evaluate(Curve("9", {{1, 0.55}, {2, 0.5}}), Ptrs(kCompleted)).stop);
  // At step 1 the averages are 0.5, 0.7, 0.1 -> median 0.5.
  StoppingDecision d = rule.Evaluate(Curve("9", {{1, 0.45}}), Ptrs(kCompleted));
  EXPECT_EQ(d.reason,
            "median automated stopping: best acc so far 0.45 is worse than the median 0.5 of the "
            "running averages of 3 completed trials up to step 1");
}

TEST(MedianStoppingRuleTest, MinimizeNeedsEnoughCompletedTrialsAndUsesElapsedTime) {
  MedianStoppingRule min_rule({"acc", Goal::kMinimize}, false);
  // Minimising: median 0.55 at step 2; best 0.6 is worse (higher) -> stop; 0.5 -> continue.
  EXPECT_TRUE(min_rule.Evaluate(Curve("9", {{1, 0.9}, {2, 0.6}}), Ptrs(kCompleted)).stop);
  EXPECT_FALSE(min_rule.Evaluate(Curve("9", {{1, 0.9}, {2, 0.5}}), Ptrs(kCompleted)).stop);
  // Two completed trials are not enough by default.
  std::vector<Trial> two(kCompleted.begin(), kCompleted.begin() + 2);
  MedianStoppingRule max_rule({"acc", Goal::kMaximize}, false);
  EXPECT_FALSE(max_rule.Evaluate(Curve("9", {{1, 0.0}}), Ptrs(two)).stop);
  // Elapsed time as the x-axis: the running trial is at 15 s; completed measurements at 10 s
  // count, those at 20 s do not.
  std::vector<Trial> timed = {Curve("1", {{1, 0.8}, {2, 0.1}}, {10, 20}),
                              Curve("2", {{5, 0.8}, {9, 0.1}}, {10, 20}),
                              Curve("3", {{7, 0.8}, {8, 0.1}}, {10, 20})};
  MedianStoppingRule elapsed_rule({"acc", Goal::kMaximize}, true);
  EXPECT_TRUE(elapsed_rule.Evaluate(Curve("9", {{100, 0.7}}, {15}), Ptrs(timed)).stop);
  MedianStoppingRule step_rule({"acc", Goal::kMaximize}, false);
  // By steps (100 >= all), the averages are 0.45 each: 0.7 continues.
  EXPECT_FALSE(step_rule.Evaluate(Curve("9", {{100, 0.7}}, {15}), Ptrs(timed)).stop);
}

TEST(DecayCurveStoppingRuleTest, StopsAHopelessCurveAndKeepsAPromisingOne) {
  StudySpec spec = *ParseStudySpec(nlohmann::json::parse(R"({
      "metrics": [{"metricId": "acc", "goal": "MAXIMIZE"}],
      "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0, "maxValue": 1}}],
      "decayCurveStoppingSpec": {}})"));
  // Completed learning curves rise to 0.7 .. 0.9 by step 10 (acc = top * (1 - e^{-step/3})).
  std::vector<Trial> completed;
  for (int k = 0; k < 5; ++k) {
    std::vector<std::pair<int64_t, double>> pts;
    const double top = 0.7 + 0.05 * k;
    for (int s = 1; s <= 10; ++s) pts.push_back({s, top * (1 - std::exp(-s / 3.0))});
    Trial t = Curve(std::to_string(k + 1), pts);
    t.parameters = {{"lr", 0.2 * k}};
    completed.push_back(t);
  }
  std::unique_ptr<StoppingRule> rule = MakeStoppingRule(spec);
  Trial bad = Curve("9", {{1, 0.02}, {2, 0.03}, {3, 0.035}, {4, 0.04}});
  bad.parameters = {{"lr", 0.9}};
  Trial good = Curve("10", {{1, 0.3}, {2, 0.5}, {3, 0.62}, {4, 0.72}});
  good.parameters = {{"lr", 0.85}};
  StoppingDecision d = rule->Evaluate(bad, Ptrs(completed));
  EXPECT_TRUE(d.stop) << d.reason;
  EXPECT_FALSE(rule->Evaluate(good, Ptrs(completed)).stop);
}

}  // namespace
}  // namespace trainyard::tuning
