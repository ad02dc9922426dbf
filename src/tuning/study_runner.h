// StudyRunner: the study logic of one HyperparameterTuningJob, independent of how trials run.
//
// The platform (api/ + store/ + executor/) owns one StudyRunner per running tuning job and
// feeds it events; the runner decides what to start and stop through a TrialLauncher:
//
//   runner = StudyRunner::Create(spec, &launcher, options)   // or Restore(saved_state, ...)
//   runner->Pump()                      // starts up to parallelTrialCount trials
//   ... a trial's metrics file / stdout changes:
//   runner->UpdateMeasurements(id, collector.measurements())   // may StopTrial (early stopping)
//   ... a trial's job reaches a terminal state:
//   runner->OnTrialEnded(id, {succeeded, error})               // starts the next trials
//   ... persist runner->SaveState() after every call (one transaction with the job row).
//
// Rules:
// - At most parallelTrialCount trials are ACTIVE/STOPPING at once, at most maxTrialCount trials
//   are created; GRID_SEARCH also ends when the grid is exhausted.
// - A trial whose job fails (or whose StartTrial fails) ends INFEASIBLE with jobFailed and counts
//   against EffectiveMaxFailedTrialCount; reaching it fails the study ("3 trials failed
//   (maxFailedTrialCount=3); last: trial 5: exit code 1") and stops the running trials.
// - A trial that ends without any measurement of the study metric is INFEASIBLE (not a failure).
// - A trial the runner asked to stop (early stopping, study failed or cancelled) ends SUCCEEDED
//   if it has a measurement of the metric, whatever its job's exit status (SIGTERM exits are
//   expected), else INFEASIBLE.
// - Final measurement per measurementSelectionType (metric_collector.h).
// - The study SUCCEEDS when no trial is running and no more may start, provided at least one
//   trial SUCCEEDED; otherwise it FAILS naming the metric that never arrived.
//
// Determinism: the runner's whole state (spec, trials, counters, searcher state) round-trips
// through SaveState/Restore; a restored runner fed the same events makes the same decisions.
//
// Thread-safety: none. The owner serialises calls. The launcher is called synchronously from
// Pump/UpdateMeasurements/OnTrialEnded/Cancel and must not call back into the runner from
// inside StartTrial/StopTrial (queue the event instead).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "tuning/early_stopping.h"
#include "tuning/searcher.h"
#include "tuning/study_spec.h"

namespace trainyard::tuning {

// What a trial's job gets on top of the trialJobSpec.
struct TrialLaunch {
  // "--<parameterId>=<value>", appended to the args of every replica's container/python spec.
  std::vector<std::string> args;
  // CLOUD_ML_TRIAL_ID=<trial id>. The platform adds CLOUD_ML_HP_METRIC_FILE and the
  // AIP_*_DIR variables with a "<trial id>/" level (see README.md).
  std::map<std::string, std::string> env;
};
TrialLaunch BuildTrialLaunch(const Trial& trial);

class TrialLauncher {
 public:
  virtual ~TrialLauncher() = default;
  // Starts the trial's job. OK: the trial is ACTIVE and its end will be reported through
  // OnTrialEnded. An error counts as a failed trial at once (its message is the reason).
  virtual Status StartTrial(const Trial& trial, const TrialLaunch& launch) = 0;
  // Asks a running trial's job to stop (SIGTERM, so it checkpoints). Its end is still reported.
  virtual void StopTrial(const std::string& trial_id) = 0;
};

enum class StudyState { kRunning, kSucceeded, kFailed, kCancelled };
std::string_view StudyStateName(StudyState state);  // "RUNNING", ...

struct TrialOutcome {
  bool succeeded = false;  // the job ended SUCCEEDED
  std::string error;       // for failures: the job's error, e.g. "replica 0 exited with code 1"
};

struct StudyRunnerOptions {
  uint64_t seed = 0;  // searcher seed; persisted, so a restored study keeps it
  WallClock clock = OrSystemClock(nullptr);
  // Makes the study's searcher; unset: MakeSearcher (searcher.h). Tests inject a fake.
  std::function<std::unique_ptr<Searcher>(const StudySpec& spec, uint64_t seed)> make_searcher;
};

class StudyRunner {
 public:
  // Validates `spec` (INVALID_ARGUMENT with field paths) and makes a runner with no trials.
  static StatusOr<std::unique_ptr<StudyRunner>> Create(HyperparameterTuningJobSpec spec,
                                                       TrialLauncher* launcher,
                                                       StudyRunnerOptions options = {});
  // Rebuilds a runner from SaveState() output. Trials that were ACTIVE stay ACTIVE: the platform
  // re-adopts their jobs and keeps reporting. INVALID_ARGUMENT / DATA_LOSS on a bad state.
  static StatusOr<std::unique_ptr<StudyRunner>> Restore(const nlohmann::json& state,
                                                        TrialLauncher* launcher,
                                                        StudyRunnerOptions options = {});

  // Starts trials while slots and budget remain, in one round: at most one Searcher::Suggest
  // call and parallelTrialCount starts. A start that fails frees its slot for the next call, so
  // a study whose every trial fails at start does a bounded amount of work per call instead of
  // spending its whole failure budget in one (the owner calls Pump again from its poll loop).
  // OK also when nothing is started; errors only from the searcher (INTERNAL).
  Status Pump();
  // Replaces the measurements of a running trial with `measurements` (the full list so far) and
  // applies automated stopping. NOT_FOUND for unknown ids; OK and ignored for ended trials.
  Status UpdateMeasurements(const std::string& trial_id, std::vector<Measurement> measurements);
  // Records the end of a trial's job, then starts the next trials (Pump). NOT_FOUND for
  // unknown ids; OK and ignored when the trial already ended (events may be redelivered).
  Status OnTrialEnded(const std::string& trial_id, const TrialOutcome& outcome);
  // Cancels the study: stops running trials and ends CANCELLED. OK if already ended.
  Status Cancel();
  // Associates the trial with its CustomJob's resource name (shown in the trial's JSON).
  Status SetCustomJob(const std::string& trial_id, std::string custom_job);

  StudyState state() const { return state_; }
  const std::string& error() const { return error_; }  // for kFailed
  const std::vector<Trial>& trials() const { return trials_; }
  const HyperparameterTuningJobSpec& spec() const { return spec_; }
  int failed_trial_count() const { return failed_count_; }
  // The SUCCEEDED trial with the best final value, if any.
  std::optional<Trial> BestTrial() const;

  nlohmann::json SaveState() const;

 private:
  StudyRunner(HyperparameterTuningJobSpec spec, TrialLauncher* launcher,
              StudyRunnerOptions options);
  Trial* Find(const std::string& id);
  int ActiveCount() const;
  // Pump's one round: one Suggest for the free slots, then the starts.
  Status StartRound();
  SearchHistory History() const;
  void FailTrial(Trial* trial, const std::string& reason);
  void StopAll(const std::string& reason);
  void CheckFinished();
  std::optional<double> Objective(const Trial& trial) const;

  HyperparameterTuningJobSpec spec_;
  TrialLauncher* launcher_;
  StudyRunnerOptions options_;
  std::unique_ptr<Searcher> searcher_;
  std::unique_ptr<StoppingRule> stopping_rule_;
  std::vector<Trial> trials_;
  StudyState state_ = StudyState::kRunning;
  std::string error_;
  int failed_count_ = 0;
  bool exhausted_ = false;
};

}  // namespace trainyard::tuning
