#include "tuning/early_stopping.h"

#include <algorithm>
#include <cmath>

#include "tuning/gaussian_process.h"

namespace trainyard::tuning {
namespace {

struct Point {
  double position;
  double value;
};

// The (position, objective) pairs of a trial's measurements that carry the metric.
std::vector<Point> Curve(const Trial& t, const std::string& metric_id, bool use_elapsed) {
  std::vector<Point> out;
  for (const Measurement& m : t.measurements) {
    std::optional<double> v = m.Metric(metric_id);
    if (!v || !std::isfinite(*v)) continue;
    double pos = use_elapsed ? m.elapsed_seconds.value_or(-1.0) : static_cast<double>(m.step_count);
    if (use_elapsed && !m.elapsed_seconds) continue;
    out.push_back({pos, *v});
  }
  return out;
}

bool Better(Goal goal, double a, double b) { return goal == Goal::kMaximize ? a > b : a < b; }

}  // namespace

MedianStoppingRule::MedianStoppingRule(MetricSpec metric, bool use_elapsed_duration,
                                       MedianStoppingOptions options)
    : metric_(std::move(metric)), use_elapsed_duration_(use_elapsed_duration), options_(options) {}

StoppingDecision MedianStoppingRule::Evaluate(const Trial& trial,
                                              const std::vector<const Trial*>& completed) const {
  const std::vector<Point> own = Curve(trial, metric_.metric_id, use_elapsed_duration_);
  if (own.empty()) return {};
  const double last = own.back().position;
  double best = own.front().value;
  for (const Point& p : own) {
    if (Better(metric_.goal, p.value, best)) best = p.value;
  }
  std::vector<double> performance;
  for (const Trial* c : completed) {
    double sum = 0;
    int n = 0;
    for (const Point& p : Curve(*c, metric_.metric_id, use_elapsed_duration_)) {
      if (p.position <= last) {
        sum += p.value;
        ++n;
      }
    }
    if (n > 0) performance.push_back(sum / n);
  }
  if (static_cast<int>(performance.size()) < std::max(1, options_.min_completed_trials)) return {};
  std::sort(performance.begin(), performance.end());
  const size_t k = performance.size();
  const double median =
      k % 2 ? performance[k / 2] : 0.5 * (performance[k / 2 - 1] + performance[k / 2]);
  if (!Better(metric_.goal, median, best)) return {};
  return {true, "median automated stopping: best " + metric_.metric_id + " so far " +
                    FormatParameterValue(best) + " is worse than the median " +
                    FormatParameterValue(median) + " of the running averages of " +
                    std::to_string(k) + " completed trials up to " +
                    (use_elapsed_duration_ ? "elapsed " + FormatParameterValue(last) + "s"
                                           : "step " + FormatParameterValue(last))};
}

DecayCurveStoppingRule::DecayCurveStoppingRule(const StudySpec& spec, bool use_elapsed_duration,
                                               DecayCurveOptions options)
    : space_(spec),
      metric_(spec.metrics.at(0)),
      use_elapsed_duration_(use_elapsed_duration),
      options_(options) {}

StoppingDecision DecayCurveStoppingRule::Evaluate(
    const Trial& trial, const std::vector<const Trial*>& completed) const {
  const std::vector<Point> own = Curve(trial, metric_.metric_id, use_elapsed_duration_);
  if (static_cast<int>(own.size()) < options_.min_measurements) return {};
  const double sign = metric_.goal == Goal::kMaximize ? 1.0 : -1.0;

  // The horizon is the latest final position among completed trials; the best completed value is
  // judged at each trial's end (its last measurement).
  std::vector<std::pair<const Trial*, std::vector<Point>>> curves;
  double horizon = 0;
  double best_final = -std::numeric_limits<double>::infinity();
  for (const Trial* c : completed) {
    std::vector<Point> curve = Curve(*c, metric_.metric_id, use_elapsed_duration_);
    if (curve.empty()) continue;
    horizon = std::max(horizon, curve.back().position);
    best_final = std::max(best_final, sign * curve.back().value);
    curves.emplace_back(c, std::move(curve));
  }
  if (static_cast<int>(curves.size()) < options_.min_completed_trials) return {};
  if (!(horizon > 0) || own.back().position >= horizon) return {};
  if (static_cast<int>(curves.size()) > options_.max_trials) {
    curves.erase(curves.begin(), curves.end() - options_.max_trials);
  }
  curves.emplace_back(&trial, own);
  const int per_trial = std::clamp(options_.max_points / static_cast<int>(curves.size()), 2,
                                   options_.max_points_per_trial);

  const int dim = space_.FeatureDim() + 1;
  std::vector<Eigen::VectorXd> rows;
  std::vector<double> ys;
  for (const auto& [t, curve] : curves) {
    const Eigen::VectorXd enc = space_.Encode(t->parameters);
    const int n = static_cast<int>(curve.size());
    const int keep = std::min(n, per_trial);
    for (int i = 0; i < keep; ++i) {
      // Evenly thinned, always keeping the last point.
      const int idx = keep == 1 ? n - 1 : static_cast<int>(std::lround(i * (n - 1.0) / (keep - 1)));
      Eigen::VectorXd row(dim);
      row.head(dim - 1) = enc;
      // Positions warped by log1p so early, fast-changing steps are spread out.
      row[dim - 1] = std::log1p(std::max(0.0, curve[idx].position)) / std::log1p(horizon);
      rows.push_back(row);
      ys.push_back(sign * curve[idx].value);
    }
  }
  const int n = static_cast<int>(rows.size());
  Eigen::MatrixXd x(n, dim);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    x.row(i) = rows[i].transpose();
    y[i] = ys[i];
  }
  const double mean = y.mean();
  double sd = std::sqrt((y.array() - mean).square().sum() / n);
  if (!(sd > 1e-12)) sd = 1.0;
  y = (y.array() - mean) / sd;
  GpFitOptions fit;
  fit.random_starts = 1;
  fit.max_iterations = 50;
  StatusOr<GpHyperparameters> hp = FitGpHyperparameters(x, y, fit);
  if (!hp.ok()) return {};
  StatusOr<GaussianProcess> gp = GaussianProcess::Condition(x, y, *hp);
  if (!gp.ok()) return {};
  Eigen::MatrixXd q(1, dim);
  q.row(0).head(dim - 1) = space_.Encode(trial.parameters).transpose();
  q(0, dim - 1) = 1.0;
  const GaussianProcess::Prediction p = gp->Predict(q);
  const double target = (best_final - mean) / sd;
  const double s = std::sqrt(p.variance[0] + hp->noise_variance);
  const double prob = 0.5 * std::erfc(-(p.mean[0] - target) / (s * std::sqrt(2.0)));
  if (prob >= options_.probability_threshold) return {};
  const double predicted = sign * (p.mean[0] * sd + mean);
  return {true, "decay-curve stopping: predicted final " + metric_.metric_id + " " +
                    FormatParameterValue(predicted) + " has probability " +
                    FormatParameterValue(prob) + " of beating the best completed value " +
                    FormatParameterValue(sign * best_final)};
}

std::unique_ptr<StoppingRule> MakeStoppingRule(const StudySpec& spec) {
  if (spec.metrics.empty()) return nullptr;
  if (const auto* m = std::get_if<MedianStoppingSpec>(&spec.automated_stopping)) {
    return std::make_unique<MedianStoppingRule>(spec.metrics[0], m->use_elapsed_duration);
  }
  if (const auto* d = std::get_if<DecayCurveStoppingSpec>(&spec.automated_stopping)) {
    return std::make_unique<DecayCurveStoppingRule>(spec, d->use_elapsed_duration);
  }
  return nullptr;
}

}  // namespace trainyard::tuning
