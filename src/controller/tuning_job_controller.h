// TuningJobController: the single writer of HyperparameterTuningJob state, the HP-tuning twin of
// JobController (spec -> store -> controller -> api, the same layers as custom jobs).
//
// Each job is a tuning::StudyRunner (src/tuning: search algorithms, early stopping, the study's
// rules) whose trials are CustomJobs created through the JobController: the trialJobSpec with
// `--<parameterId>=<value>` appended to every pool's args, env CLOUD_ML_TRIAL_ID=<trial id>,
// baseOutputDirectory/<trial id>/ as the trial's base output (so AIP_MODEL_DIR etc. are per trial)
// and labels trainyard-hp-tuning-job / trainyard-trial.
//
// A poll pass (PollOnce, every poll_interval on the controller's thread) looks at every running
// trial: its job's state (JobController::Get), its hypertune metrics file and its primary
// replica's stdout (the `metricId=value` fallback) feed a tuning::MetricCollector; new
// measurements go to StudyRunner::UpdateMeasurements (which may stop the trial: the job is
// cancelled, SIGTERM, so the trainer checkpoints) and a terminal job to OnTrialEnded (after a
// last read of the metrics). The job's state follows the runner: PENDING until the first trial
// starts, RUNNING, SUCCEEDED, FAILED (error.message is the runner's reason), CANCELLING while
// cancelled trials are still stopping, CANCELLED.
//
// Durability: the job and its runtime state (runner SaveState(), collectors, log cursors) are
// written to the TuningJobStore after every change, one transaction each; Create returns only
// after the job is stored. Start() after a restart restores every job, re-attaches to the
// trials' jobs (the JobController re-adopted them in its own Start), cancels orphan trial jobs
// created just before a crash that the stored state does not know, and rewrites every record
// (so rows imported from a legacy studies.db get their state, trials and error).
//
// Thread-safety: all public methods may be called concurrently. Each study has its own runner
// mutex, held for every call into its runner (the tuning core is single-threaded); the
// controller's mutex only guards the map of studies and each study's published view, and is
// never held across controller work. So Get and List never wait for a runner (Get answers the
// view published after the last runner call), and Cancel never waits either: when the study's
// runner is busy (a slow searcher, a long Pump) it records the request (stored with the job, so
// it survives a restart), answers CANCELLING, and the runner's owner applies it as soon as its
// call returns. PollOnce skips a study whose runner is busy and checks Stop's flag between
// studies, and StudyRunner::Pump does one round per call, so Stop returns within one runner call
// whatever a study does. Lock order: a study's runner mutex, its persist mutex, the controller's.
// The JobController never calls back into this.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/periodic_thread.h"
#include "common/status.h"
#include "controller/job_controller.h"
#include "spec/hyperparameter_tuning_job.h"
#include "store/tuning_job_store.h"
#include "tuning/metric_collector.h"
#include "tuning/study_runner.h"

namespace trainyard::controller {

struct TuningJobControllerOptions {
  // How often running trials are polled; 0 = no thread (tests call PollOnce).
  std::chrono::milliseconds poll_interval{1000};
  // Where the primary replica of a trial's job writes CLOUD_ML_HP_METRIC_FILE. Unset: only the
  // stdout fallback is used (e.g. with the fake executor).
  std::function<std::filesystem::path(const spec::CustomJob& job)> metric_file;
  Clock clock;  // default: system clock
  // Seeds searchers; default: derived from the job id. Tests fix it.
  std::optional<uint64_t> seed;
  // Makes a study's searcher; unset: tuning::MakeSearcher. Tests inject a fake.
  using SearcherFactory =
      std::function<std::unique_ptr<tuning::Searcher>(const tuning::StudySpec&, uint64_t seed)>;
  SearcherFactory make_searcher;
};

class TuningJobController {
 public:
  // `store` and `jobs` must outlive the controller.
  TuningJobController(store::TuningJobStore* store, JobController* jobs,
                      TuningJobControllerOptions options);
  ~TuningJobController();

  // Restores the stored jobs (call after JobController::Start) and starts the poll thread.
  // Fails only if the store cannot be read or written; a job whose runtime state cannot be
  // restored is marked FAILED with the reason.
  Status Start();
  // Stops the poll thread (running trial jobs keep running; a later Start resumes them). Returns
  // once the running pass has finished the study it is at (see Thread-safety).
  void Stop();

  // `parent` "projects/P/locations/L"; `request` a decoded create request. Returns the stored
  // job. INVALID_ARGUMENT with the field path (studySpec..., trialJobSpec...) for invalid
  // requests: spec::ValidateHyperparameterTuningJob (counts capped at spec::kMaxTrialCount),
  // then the checks JobController::Create makes of a custom job (JobController::Validate), on
  // the first trial's job, so a trial that could not start is refused here; nothing is stored
  // then. `id`: the job's id, from NewId() (a legacy job stores its backing job's name before
  // creating it); empty = a new one. ALREADY_EXISTS if a job of that name exists.
  // request.creator is kept, and given to every trial's job.
  StatusOr<spec::HyperparameterTuningJob> Create(const std::string& parent,
                                                 spec::HyperparameterTuningJob request,
                                                 const std::string& id = "");
  // A fresh job id (numeric, increasing) for Create's `id`.
  std::string NewId();
  // NOT_FOUND if unknown. Never waits for the study's runner: the state after its last call.
  StatusOr<spec::HyperparameterTuningJob> Get(const std::string& name);
  // The store's list: newest first, the custom-job filter syntax and page tokens.
  StatusOr<store::TuningJobListResult> List(const store::ListQuery& query);
  // OK once the job is CANCELLING/CANCELLED; FAILED_PRECONDITION if it already ended. Never
  // waits for a busy runner: the request is stored and applied when the runner's call returns
  // (or by Start after a restart).
  Status Cancel(const std::string& name);
  // Deletes an ended job and its trial jobs; returns the deleted job. FAILED_PRECONDITION while
  // it runs or trials are still stopping.
  StatusOr<spec::HyperparameterTuningJob> Delete(const std::string& name);

  // One poll pass over every running job (the thread's body; tests call it directly).
  void PollOnce();

 private:
  struct Study;
  class Launcher;
  struct TrialWatch {
    std::string job_name;
    std::unique_ptr<tuning::MetricCollector> collector;
    int64_t log_cursor = -1;
  };

  std::shared_ptr<Study> Find(const std::string& name);
  // JobController::Validate on the job trial 1 would get, in the request's field names.
  Status ValidateTrialJob(const std::string& parent, const spec::HyperparameterTuningJob& job);
  tuning::StudyRunnerOptions RunnerOptions(const std::string& id) const;
  std::unique_ptr<tuning::MetricCollector> NewCollector(const Study& s,
                                                        std::optional<double> start) const;
  // After a runner call (runner mutex held): applies a cancel Cancel recorded meanwhile, records
  // the jobs the launcher created (SetCustomJob), sets end_time and publishes the view.
  void AfterRunnerCall(Study& s);
  // Copies the study's job to the view Get answers (runner mutex held).
  void Publish(Study& s);
  // Cancel's path when the runner is busy: records and stores the request.
  Status RequestCancel(Study& s);
  // Reads metrics/logs of one running trial and reports its end; true if something changed.
  bool PollTrial(Study& s, const std::string& trial_id);
  bool ReadTrialOutput(TrialWatch& w, const spec::CustomJob& job);
  void PollStudy(Study& s);
  // Brings the resource's output fields (state, trials, start time, error) up to the runner.
  void Refresh(Study& s) const;
  Status Persist(Study& s, bool insert = false);
  nlohmann::json RuntimeState(const Study& s) const;
  Status RestoreStudy(const store::TuningJobRecord& record);
  Status RestoreRunner(Study& s, const nlohmann::json& runtime);
  void CancelOrphans(Study& s);

  store::TuningJobStore* store_;
  JobController* jobs_;
  TuningJobControllerOptions options_;

  std::mutex mu_;  // guards studies_, last_id_ and each study's view fields (see Study)
  std::map<std::string, std::shared_ptr<Study>> studies_;  // by name
  uint64_t last_id_ = 0;
  std::atomic<bool> stopping_{false};  // set by Stop: PollOnce returns between studies

  PeriodicThread poller_;  // PollOnce() every options_.poll_interval
};

}  // namespace trainyard::controller
