// LegacyJobController: AI Platform Training's jobs (ml.googleapis.com v1 `projects/{p}/jobs`,
// spec/legacy_job.h) on the engine of Vertex jobs. A legacy job is its own resource — keyed by
// project and the client's jobId, kept by a StoredResourceController (kind "jobs") — backed by
// one CustomJob, or one HyperparameterTuningJob when its trainingInput has hyperparameters, that
// spec/legacy_translation.h makes of its trainingInput, in location trainingInput.region,
// display name = jobId and label trainyard-ai-platform-job=<jobid, lowercase>. So it also shows
// in `gcloud ai custom-jobs list`, streams its logs through Cloud Logging, and runs on every
// executor with the same scheduling, security (serviceAccount -> replica user) and HP engine.
//
// Create: decode and translate (400 with field paths, nothing stored), store the job QUEUED (a
// taken jobId is 409 with AI Platform's wording), choose the backing job's id and store its name
// with the job (so a restart finds it: Start), then create the backing job. The backing
// controllers' create checks (custom job validation, the image catalog, the executor; for an HP
// job on its trials' job, and its counts' limits) make a request that could not run a 400. A
// backing job the engine refuses as invalid (an unknown machine, a GPU the host lacks) removes the
// legacy job again and is the request's 400, its paths named in trainingInput's terms; any other
// failure after the store ends the job FAILED with the reason and still answers 200, never a 5xx
// (gcloud retries a 5xx POST, and the retry would get 409 for a job that exists).
//
// State: the backing job's, mapped (spec::LegacyStateOf), with its start and end times and error
// message, and for an HP job trainingOutput (spec::TrainingOutputOf). It is brought up to date
// when the job is read (Get, List, Cancel), so `gcloud ai-platform jobs stream-logs` sees endTime
// as soon as the backing job ended; every ended state has an endTime. The etag changes with every
// change and is valid base64 (gcloud decodes it as bytes).
//
// Thread-safety: all methods may be called concurrently. The backing controllers never call back.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "controller/job_controller.h"
#include "controller/stored_resource.h"
#include "store/resource_store.h"

namespace trainyard::controller {

// Not included: it brings Eigen (src/tuning), which breaks next to cpp-httplib's header
// (api/api_server.h says why).
class TuningJobController;

inline constexpr const char* kLegacyJobsKind = "jobs";
inline constexpr const char* kLegacyJobLabel = "trainyard-ai-platform-job";

// QUEUED (1) ... CANCELLED (7): GoogleCloudMlV1Job.State, for list filters.
const store::StateVocabulary& LegacyJobStates();

// One stream of log lines of a legacy job: a backing CustomJob (its id) and, for an HP trial,
// the trial's id.
struct LegacyLogStream {
  std::string custom_job_id;
  std::string trial_id;
};

class LegacyJobController {
 public:
  // `store` and `jobs` must outlive the controller; `tuning` too, or null (then a job with
  // hyperparameters is refused with 400).
  LegacyJobController(store::ResourceStore* store, JobController* jobs, TuningJobController* tuning,
                      Clock clock = nullptr);

  // Finishes what a previous server's Create left half done (it stopped in between). Create
  // stores the backing job's name it chose before creating that job: if the job exists, it is
  // re-attached (or cancelled, when the legacy job was cancelled meanwhile); if not, or for a
  // row written before names were stored, the job ends FAILED, saying to submit again. Only
  // store errors fail it. Call after the backing controllers' Start.
  Status Start();

  // `parent` "projects/P"; `body` the request's Job JSON; `job_id` its jobId (checked by the
  // route). Returns the Job as the API shows it. `creator` (when given) is stored as its
  // trainyardInfo.creator and given to its backing job (and that one's trials).
  StatusOr<nlohmann::json> Create(const std::string& parent, const std::string& body,
                                  const std::string& job_id,
                                  const std::optional<spec::Creator>& creator = std::nullopt);
  // NOT_FOUND if unknown.
  StatusOr<nlohmann::json> Get(const std::string& name);
  // The jobs of query.parent, newest first, each up to date (the store's filters and tokens).
  StatusOr<store::ResourcePage> List(const store::ListQuery& query);
  // Cancels the backing job: OK once the job is CANCELLING or CANCELLED; FAILED_PRECONDITION when
  // it already ended (the API answers {} for that: gcloud promises success); NOT_FOUND if
  // unknown.
  Status Cancel(const std::string& name);
  // `?updateMask=labels` only (the patchable field). Returns the Job.
  StatusOr<nlohmann::json> Patch(const std::string& name, const nlohmann::json& patch,
                                 const std::vector<std::string>& update_mask);

  // The backing job's resource name ("" while none was created yet). NOT_FOUND if unknown.
  StatusOr<std::string> BackingName(const std::string& name);
  // The log streams of job `job_id` of `project`: its custom job, or its trials' custom jobs.
  // nullopt when the project has no legacy job of that id.
  StatusOr<std::optional<std::vector<LegacyLogStream>>> LogStreams(const std::string& project,
                                                                   const std::string& job_id);

 private:
  // Brings the stored job up to its backing job's state; returns the stored JSON.
  StatusOr<nlohmann::json> Refresh(const std::string& name);
  // The stored job's fields that follow the backing job, computed from it.
  StatusOr<nlohmann::json> BackingView(const std::string& backing);
  // Start's re-attach of one record: true when its planned backing job exists (see Start).
  StatusOr<bool> Reattach(const store::ResourceRecord& r);
  // NOT_FOUND from the backing controller is false.
  StatusOr<bool> BackingExists(const std::string& backing);
  // Records the backing job Create made (or removes / fails the stored job when there is none:
  // see Create); returns what Create answers.
  StatusOr<nlohmann::json> Launched(const std::string& name, const StatusOr<std::string>& backing);

  store::ResourceStore* store_;
  JobController* jobs_;
  TuningJobController* tuning_;
  Clock clock_;
  StoredResourceController resources_;
};

// The Job as the API answers it: the stored JSON without the store's own fields.
nlohmann::json LegacyJobView(const nlohmann::json& stored);

}  // namespace trainyard::controller
