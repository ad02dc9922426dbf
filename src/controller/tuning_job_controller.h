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
// Thread-safety: all public methods may be called concurrently; one mutex serialises the
// runners (the tuning core is single-threaded). The JobController never calls back into this.
#pragma once

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
  // Stops the poll thread (running trial jobs keep running; a later Start resumes them).
  void Stop();

  // `parent` "projects/P/locations/L"; `request` a decoded create request. Returns the stored
  // job. INVALID_ARGUMENT with the field path (studySpec..., trialJobSpec...) for invalid
  // requests (spec::ValidateHyperparameterTuningJob); nothing is stored then.
  StatusOr<spec::HyperparameterTuningJob> Create(const std::string& parent,
                                                 spec::HyperparameterTuningJob request);
  // NOT_FOUND if unknown.
  StatusOr<spec::HyperparameterTuningJob> Get(const std::string& name);
  // The store's list: newest first, the custom-job filter syntax and page tokens.
  StatusOr<store::TuningJobListResult> List(const store::ListQuery& query);
  // OK once the job is CANCELLING/CANCELLED; FAILED_PRECONDITION if it already ended.
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

  std::string NewId();
  tuning::StudyRunnerOptions RunnerOptions(const std::string& id) const;
  std::unique_ptr<tuning::MetricCollector> NewCollector(const Study& s,
                                                        std::optional<double> start) const;
  // After a runner call: records the jobs the launcher created (SetCustomJob), sets end_time.
  void AfterRunnerCall(Study& s);
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

  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Study>> studies_;  // by name
  uint64_t last_id_ = 0;

  PeriodicThread poller_;  // PollOnce() every options_.poll_interval
};

}  // namespace trainyard::controller
