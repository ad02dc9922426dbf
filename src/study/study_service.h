// StudyService: runs HyperparameterTuningJobs on the platform (issue 6; src/tuning/README.md
// "Intended wiring").
//
// Each study is a tuning::StudyRunner whose trials are CustomJobs created through the
// JobController: the trialJobSpec with `--<parameterId>=<value>` appended to every pool's args,
// env CLOUD_ML_TRIAL_ID=<trial id>, baseOutputDirectory/<trial id>/ as the trial's base output
// (so AIP_MODEL_DIR etc. are per trial) and labels trainyard-hp-tuning-job / trainyard-trial.
//
// A poll pass (PollOnce, every poll_interval on the service's thread) looks at every running
// trial: its job's state (JobController::Get), its hypertune metrics file and its primary
// replica's stdout (the `metricId=value` fallback) feed a tuning::MetricCollector; new
// measurements go to StudyRunner::UpdateMeasurements (which may stop the trial: the job is
// cancelled, SIGTERM, so the trainer checkpoints) and a terminal job to OnTrialEnded (after a
// last read of the metrics). The job state follows the runner: PENDING until the first trial
// starts, RUNNING, SUCCEEDED, FAILED (error.message is the runner's reason), CANCELLING while
// cancelled trials are still stopping, CANCELLED.
//
// Durability: the study record (request, runner SaveState(), collectors, log cursors) is
// written to the StudyStore after every change, one transaction each; Create returns only
// after the study is stored. Start() after a restart restores every study, re-attaches to the
// trials' jobs (the controller re-adopted them in its own Start) and cancels orphan trial jobs
// created just before a crash that the stored state does not know.
//
// Thread-safety: all public methods may be called concurrently; one mutex serialises the
// runners (the tuning core is single-threaded). The controller never calls back into the
// service.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "controller/job_controller.h"
#include "study/study_store.h"
#include "tuning/metric_collector.h"
#include "tuning/study_runner.h"

namespace trainyard::study {

struct StudyServiceOptions {
  // How often running trials are polled; 0 = no thread (tests call PollOnce).
  std::chrono::milliseconds poll_interval{1000};
  // Where the primary replica of a trial's job writes CLOUD_ML_HP_METRIC_FILE. Unset: only the
  // stdout fallback is used (e.g. with the fake executor).
  std::function<std::filesystem::path(const spec::CustomJob& job)> metric_file;
  controller::Clock clock;  // default: system clock
  // Seeds searchers; default: derived from the job id. Tests fix it.
  std::optional<uint64_t> seed;
};

struct StudyListPage {
  std::vector<nlohmann::json> jobs;
  std::string next_page_token;
};

class StudyService {
 public:
  // `store` and `controller` must outlive the service.
  StudyService(StudyStore* store, controller::JobController* controller,
               StudyServiceOptions options);
  ~StudyService();

  // Restores the stored studies (call after JobController::Start) and starts the poll thread.
  // Fails only if the store cannot be read; a study whose state cannot be restored is marked
  // FAILED with the reason.
  Status Start();
  // Stops the poll thread (running trial jobs keep running; a later Start resumes them).
  void Stop();

  // `parent` "projects/P/locations/L"; `body` a HyperparameterTuningJob in Vertex's JSON shape.
  // Returns the stored job. INVALID_ARGUMENT with the field path (studySpec..., trialJobSpec...)
  // for invalid requests; nothing is stored then.
  StatusOr<nlohmann::json> Create(const std::string& parent, const nlohmann::json& body);
  StatusOr<nlohmann::json> Get(const std::string& name);
  // Newest first; page_size 0 = 100; page_token from a previous page (of the same filter).
  // `filter` has the syntax of ListCustomJobs' (store/list_filter.h: state, display_name,
  // create_time, update_time, labels.KEY); INVALID_ARGUMENT "filter: ..." when it is malformed.
  StatusOr<StudyListPage> List(const std::string& parent, int page_size,
                               const std::string& page_token, const std::string& filter = "");
  // OK once the study is CANCELLING/CANCELLED; FAILED_PRECONDITION if it already ended.
  Status Cancel(const std::string& name);
  // Deletes an ended study and its trial jobs; returns the deleted job. FAILED_PRECONDITION
  // while it runs or trials are still stopping.
  StatusOr<nlohmann::json> Delete(const std::string& name);

  // One poll pass over every running study (the thread's body; tests call it directly).
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
  // After a runner call: records the jobs the launcher created (SetCustomJob).
  void AfterRunnerCall(Study& s);
  // Reads metrics/logs of one running trial and reports its end; true if something changed.
  bool PollTrial(Study& s, const std::string& trial_id);
  void PollStudy(Study& s);
  Status Persist(Study& s, bool insert = false);
  nlohmann::json ToRecordData(const Study& s) const;
  nlohmann::json ToResource(const Study& s) const;
  std::string DisplayState(const Study& s) const;
  Status RestoreStudy(const StudyRecord& record);
  void CancelOrphans(Study& s);
  void Loop();

  StudyStore* store_;
  controller::JobController* controller_;
  StudyServiceOptions options_;

  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Study>> studies_;  // by name
  uint64_t last_id_ = 0;

  std::mutex thread_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace trainyard::study
