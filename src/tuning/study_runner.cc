#include "tuning/study_runner.h"

#include <algorithm>
#include <cmath>

#include "tuning/metric_collector.h"
#include "tuning/study_spec_json.h"
#include "tuning/study_spec_validate.h"

namespace trainyard::tuning {
namespace {

constexpr int kStateVersion = 1;

bool IsRunning(TrialState s) {
  return s == TrialState::kRequested || s == TrialState::kActive || s == TrialState::kStopping;
}

}  // namespace

TrialLaunch BuildTrialLaunch(const Trial& trial) {
  TrialLaunch launch;
  for (const TrialParameter& p : trial.parameters) {
    launch.args.push_back("--" + p.parameter_id + "=" + FormatParameterValue(p.value));
  }
  launch.env["CLOUD_ML_TRIAL_ID"] = trial.id;
  return launch;
}

std::string_view StudyStateName(StudyState state) {
  switch (state) {
    case StudyState::kRunning:
      return "RUNNING";
    case StudyState::kSucceeded:
      return "SUCCEEDED";
    case StudyState::kFailed:
      return "FAILED";
    case StudyState::kCancelled:
      return "CANCELLED";
  }
  return "RUNNING";
}

StudyRunner::StudyRunner(HyperparameterTuningJobSpec spec, TrialLauncher* launcher,
                         StudyRunnerOptions options)
    : spec_(std::move(spec)), launcher_(launcher), options_(std::move(options)) {
  searcher_ = options_.make_searcher ? options_.make_searcher(spec_.study_spec, options_.seed)
                                     : MakeSearcher(spec_.study_spec, options_.seed);
  stopping_rule_ = MakeStoppingRule(spec_.study_spec);
}

StatusOr<std::unique_ptr<StudyRunner>> StudyRunner::Create(HyperparameterTuningJobSpec spec,
                                                           TrialLauncher* launcher,
                                                           StudyRunnerOptions options) {
  TY_RETURN_IF_ERROR(ValidateHyperparameterTuningJobSpec(spec));
  return std::unique_ptr<StudyRunner>(
      new StudyRunner(std::move(spec), launcher, std::move(options)));
}

StatusOr<std::unique_ptr<StudyRunner>> StudyRunner::Restore(const nlohmann::json& state,
                                                            TrialLauncher* launcher,
                                                            StudyRunnerOptions options) {
  if (!state.is_object() || state.value("version", 0) != kStateVersion) {
    return DataLossError("study state: not a version-1 StudyRunner state");
  }
  TY_ASSIGN_OR_RETURN(HyperparameterTuningJobSpec spec,
                      ParseHyperparameterTuningJobSpec(state.value("spec", nlohmann::json())));
  TY_RETURN_IF_ERROR(ValidateHyperparameterTuningJobSpec(spec));
  try {
    options.seed = std::stoull(state.at("seed").get<std::string>());
  } catch (const std::exception& e) {
    return DataLossError(std::string("study state.seed: ") + e.what());
  }
  auto runner =
      std::unique_ptr<StudyRunner>(new StudyRunner(std::move(spec), launcher, std::move(options)));
  TY_RETURN_IF_ERROR(runner->searcher_->RestoreState(state.value("searcher", nlohmann::json())));
  const nlohmann::json trials = state.value("trials", nlohmann::json::array());
  if (!trials.is_array()) return DataLossError("study state.trials: not an array");
  for (size_t i = 0; i < trials.size(); ++i) {
    TY_ASSIGN_OR_RETURN(Trial t, ParseTrial(trials[i], "trials[" + std::to_string(i) + "]"));
    runner->trials_.push_back(std::move(t));
  }
  const std::string st = state.value("state", "RUNNING");
  for (StudyState s : {StudyState::kRunning, StudyState::kSucceeded, StudyState::kFailed,
                       StudyState::kCancelled}) {
    if (StudyStateName(s) == st) runner->state_ = s;
  }
  runner->error_ = state.value("error", "");
  runner->failed_count_ = state.value("failedTrialCount", 0);
  runner->exhausted_ = state.value("exhausted", false);
  return runner;
}

nlohmann::json StudyRunner::SaveState() const {
  nlohmann::json trials = nlohmann::json::array();
  for (const Trial& t : trials_) trials.push_back(ToJson(t));
  return {{"version", kStateVersion},
          {"spec", ToJson(spec_)},
          {"seed", std::to_string(options_.seed)},
          {"state", StudyStateName(state_)},
          {"error", error_},
          {"failedTrialCount", failed_count_},
          {"exhausted", exhausted_},
          {"searcher", searcher_->SaveState()},
          {"trials", trials}};
}

Trial* StudyRunner::Find(const std::string& id) {
  for (Trial& t : trials_) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

int StudyRunner::ActiveCount() const {
  return static_cast<int>(std::count_if(trials_.begin(), trials_.end(),
                                        [](const Trial& t) { return IsRunning(t.state); }));
}

std::optional<double> StudyRunner::Objective(const Trial& t) const {
  if (t.state != TrialState::kSucceeded || !t.final_measurement) return std::nullopt;
  return t.final_measurement->Metric(spec_.study_spec.metrics[0].metric_id);
}

SearchHistory StudyRunner::History() const {
  SearchHistory h;
  for (const Trial& t : trials_) {
    if (IsRunning(t.state)) {
      h.pending.push_back(t.parameters);
    } else {
      h.completed.push_back({t.parameters, Objective(t)});
    }
  }
  return h;
}

Status StudyRunner::Pump() {
  if (state_ == StudyState::kRunning && !exhausted_) TY_RETURN_IF_ERROR(StartRound());
  CheckFinished();
  return Status::Ok();
}

Status StudyRunner::StartRound() {
  const int slots = spec_.parallel_trial_count - ActiveCount();
  const int budget = spec_.max_trial_count - static_cast<int>(trials_.size());
  const int n = std::min(slots, budget);
  if (n <= 0) return Status::Ok();
  TY_ASSIGN_OR_RETURN(Suggestions s, searcher_->Suggest(n, History()));
  exhausted_ = s.exhausted;
  for (ParameterSet& set : s.parameter_sets) {
    Trial t;
    t.id = std::to_string(trials_.size() + 1);
    t.state = TrialState::kRequested;
    t.parameters = std::move(set);
    t.start_time = options_.clock();
    trials_.push_back(std::move(t));
  }
  // Start in a second pass: the launcher may fail a start, which can fail the study.
  for (size_t i = trials_.size() - s.parameter_sets.size(); i < trials_.size(); ++i) {
    Trial& t = trials_[i];
    if (state_ != StudyState::kRunning) {
      t.state = TrialState::kInfeasible;
      t.infeasible_reason =
          "not started: the study ended (" + std::string(StudyStateName(state_)) + ")";
      t.end_time = options_.clock();
      continue;
    }
    Status started = launcher_->StartTrial(t, BuildTrialLaunch(t));
    if (started.ok()) {
      t.state = TrialState::kActive;
    } else {
      FailTrial(&trials_[i], "could not start the trial's job: " + started.ToString());
    }
  }
  return Status::Ok();
}

void StudyRunner::FailTrial(Trial* t, const std::string& reason) {
  t->state = TrialState::kInfeasible;
  t->job_failed = true;
  t->infeasible_reason = reason;
  t->end_time = options_.clock();
  ++failed_count_;
  const int limit = EffectiveMaxFailedTrialCount(spec_);
  if (state_ == StudyState::kRunning && failed_count_ >= limit) {
    state_ = StudyState::kFailed;
    // Vertex: 0 lets the service choose; say what was chosen and how to set it instead.
    const std::string why = spec_.max_failed_trial_count == 0
                                ? "maxFailedTrialCount is unset, so the study stops after " +
                                      std::to_string(limit) + " failed of " +
                                      std::to_string(spec_.max_trial_count) +
                                      " trials; set --max-failed-trial-count to allow more"
                                : "maxFailedTrialCount=" + std::to_string(limit);
    error_ = std::to_string(failed_count_) + (failed_count_ == 1 ? " trial" : " trials") +
             " failed (" + why + "); last: trial " + t->id + ": " + reason;
    StopAll("the study failed: " + error_);
  }
}

void StudyRunner::StopAll(const std::string& reason) {
  for (Trial& t : trials_) {
    if (t.state == TrialState::kActive) {
      t.state = TrialState::kStopping;
      t.stop_reason = reason;
      launcher_->StopTrial(t.id);
    }
  }
}

Status StudyRunner::UpdateMeasurements(const std::string& trial_id,
                                       std::vector<Measurement> measurements) {
  Trial* t = Find(trial_id);
  if (t == nullptr) return NotFoundError("trial " + trial_id + " is not part of this study");
  if (!IsRunning(t->state)) return Status::Ok();
  t->measurements = std::move(measurements);
  if (t->state != TrialState::kActive || !stopping_rule_ || state_ != StudyState::kRunning) {
    return Status::Ok();
  }
  std::vector<const Trial*> completed;
  for (const Trial& c : trials_) {
    if (c.state == TrialState::kSucceeded) completed.push_back(&c);
  }
  StoppingDecision d = stopping_rule_->Evaluate(*t, completed);
  if (d.stop) {
    t->state = TrialState::kStopping;
    t->early_stopped = true;
    t->stop_reason = d.reason;
    launcher_->StopTrial(t->id);
  }
  return Status::Ok();
}

Status StudyRunner::OnTrialEnded(const std::string& trial_id, const TrialOutcome& outcome) {
  Trial* t = Find(trial_id);
  if (t == nullptr) return NotFoundError("trial " + trial_id + " is not part of this study");
  if (!IsRunning(t->state)) return Status::Ok();
  const MetricSpec& metric = spec_.study_spec.metrics[0];
  t->final_measurement =
      SelectFinalMeasurement(t->measurements, metric, spec_.study_spec.measurement_selection);
  if (t->state == TrialState::kStopping || outcome.succeeded) {
    t->end_time = options_.clock();
    if (t->final_measurement) {
      t->state = TrialState::kSucceeded;
    } else {
      t->state = TrialState::kInfeasible;
      t->infeasible_reason = "the trial ended without reporting metric \"" + metric.metric_id +
                             "\" (report it with cloudml-hypertune or print " + metric.metric_id +
                             "=<value>)";
    }
  } else {
    FailTrial(t, outcome.error.empty() ? "the trial's job failed" : outcome.error);
  }
  return Pump();
}

Status StudyRunner::Cancel() {
  if (state_ != StudyState::kRunning) return Status::Ok();
  state_ = StudyState::kCancelled;
  error_ = "cancelled";
  StopAll("the study was cancelled");
  return Status::Ok();
}

Status StudyRunner::SetCustomJob(const std::string& trial_id, std::string custom_job) {
  Trial* t = Find(trial_id);
  if (t == nullptr) return NotFoundError("trial " + trial_id + " is not part of this study");
  t->custom_job = std::move(custom_job);
  return Status::Ok();
}

void StudyRunner::CheckFinished() {
  if (state_ != StudyState::kRunning || ActiveCount() > 0) return;
  const bool more = !exhausted_ && static_cast<int>(trials_.size()) < spec_.max_trial_count;
  if (more) return;
  if (BestTrial()) {
    state_ = StudyState::kSucceeded;
    return;
  }
  state_ = StudyState::kFailed;
  const std::string& id = spec_.study_spec.metrics[0].metric_id;
  error_ = "no trial reported metric \"" + id + "\" (" + std::to_string(trials_.size()) +
           " trials, " + std::to_string(failed_count_) +
           " failed); report it with cloudml-hypertune or print " + id + "=<value>";
}

std::optional<Trial> StudyRunner::BestTrial() const {
  const Trial* best = nullptr;
  double best_value = 0;
  const bool maximize = spec_.study_spec.metrics[0].goal == Goal::kMaximize;
  for (const Trial& t : trials_) {
    std::optional<double> v = Objective(t);
    if (!v) continue;
    if (best == nullptr || (maximize ? *v > best_value : *v < best_value)) {
      best = &t;
      best_value = *v;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace trainyard::tuning
