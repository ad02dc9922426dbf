// Automated early stopping of unpromising trials (StudySpec.automatedStoppingSpec).
//
// Median rule — what Vertex documents for MedianAutomatedStoppingSpec (GA study.proto, and
// https://cloud.google.com/vertex-ai/docs/reference/rest/v1/StudySpec#medianautomatedstoppingspec):
//   "The median automated stopping rule stops a pending Trial if the Trial's best objective value
//    is strictly below the median 'performance' of all completed Trials reported up to the
//    Trial's last measurement. Currently, 'performance' refers to the running average of the
//    objective values reported by the Trial in each measurement."
// and useElapsedDuration: "the elapsed_duration field of latest measurement of current Trial is
// used to compute median objective value for each completed Trials" (step_count otherwise).
// So, for a running trial whose last measurement is at position p (step or elapsed time):
//   performance(C) = mean of C's objective values over C's measurements at positions <= p,
//   and the trial stops when its best value so far is strictly worse (per the goal) than the
//   median performance of the completed trials that have such measurements.
// Vertex does not document a minimum number of completed trials; we require
// `min_completed_trials` (default 3, as Katib's median stop does) before the rule can fire.
//
// Decay-curve rule — Vertex: "a Gaussian process regressor predicts the final objective value of
// a Trial based on the already completed Trials and the intermediate measurements of the current
// Trial. Early stopping is requested for the current Trial if there is very low probability to
// exceed the optimal value found so far." Here: a GP over (encoded parameters, warped position)
// fitted to the measurements of the completed trials and of the current trial predicts the
// current trial's objective at the completed trials' final position; the trial stops when
// P(final better than the best completed final value) < `probability_threshold`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuning/search_space.h"
#include "tuning/study_spec.h"

namespace trainyard::tuning {

struct StoppingDecision {
  bool stop = false;
  std::string reason;  // why it stops, for the trial's record and the logs
};

class StoppingRule {
 public:
  virtual ~StoppingRule() = default;
  // `trial`: a running trial with its measurements so far. `completed`: finished trials
  // (SUCCEEDED, measurements included, early-stopped ones too). Pure function of its inputs.
  virtual StoppingDecision Evaluate(const Trial& trial,
                                    const std::vector<const Trial*>& completed) const = 0;
};

struct MedianStoppingOptions {
  int min_completed_trials = 3;
};

class MedianStoppingRule : public StoppingRule {
 public:
  MedianStoppingRule(MetricSpec metric, bool use_elapsed_duration,
                     MedianStoppingOptions options = {});
  StoppingDecision Evaluate(const Trial& trial,
                            const std::vector<const Trial*>& completed) const override;

 private:
  MetricSpec metric_;
  bool use_elapsed_duration_;
  MedianStoppingOptions options_;
};

struct DecayCurveOptions {
  int min_completed_trials = 3;
  int min_measurements = 3;  // of the running trial before it can be judged
  double probability_threshold = 0.05;
  // The GP is kept small (it is refitted on every new measurement): at most `max_trials` of the
  // most recent completed curves, each thinned evenly to at most max_points / curves points
  // (at least 2, at most max_points_per_trial).
  int max_trials = 60;
  int max_points = 240;
  int max_points_per_trial = 20;
};

class DecayCurveStoppingRule : public StoppingRule {
 public:
  DecayCurveStoppingRule(const StudySpec& spec, bool use_elapsed_duration,
                         DecayCurveOptions options = {});
  StoppingDecision Evaluate(const Trial& trial,
                            const std::vector<const Trial*>& completed) const override;

 private:
  SearchSpace space_;
  MetricSpec metric_;
  bool use_elapsed_duration_;
  DecayCurveOptions options_;
};

// The rule for spec.automated_stopping; nullptr when none is set. `spec` must be valid.
std::unique_ptr<StoppingRule> MakeStoppingRule(const StudySpec& spec);

}  // namespace trainyard::tuning
