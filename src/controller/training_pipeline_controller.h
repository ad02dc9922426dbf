// TrainingPipelineController: the single writer of TrainingPipeline state. A pipeline (the custom
// task, spec/training_pipeline.h) is a stored resource (StoredResourceController, kind
// "trainingPipelines") that runs one backing CustomJob through the JobController and, when the job
// succeeds, registers modelToUpload in the ModelRegistry.
//
// Steps, each one store transaction, driven by Create and by a poll pass (PollOnce, every
// poll_interval on the controller's thread) over the pipelines that have not ended:
//   1. QUEUED, no job: create the backing job — trainingTaskInputs as its jobSpec (a
//      baseOutputDirectory under the staging bucket when it has none), the pipeline's labels plus
//      trainyard-training-pipeline=<id>, display name "<pipeline>-custom-job" — and record it in
//      trainingTaskMetadata.backingCustomJob.
//   2. While the job runs: the pipeline's state mirrors the job's (spec::PipelineStateOfJob),
//      startTime is the job's.
//   3. Job SUCCEEDED: register modelToUpload (artifactUri: its own, else the job's AIP_MODEL_DIR,
//      <baseOutputDirectory>/model/) as a new model (modelId, else a new id) or a version of
//      parentModel; fill modelToUpload.name and versionId; SUCCEEDED. A refused upload (no files
//      at the artifactUri, unknown parentModel) ends the pipeline FAILED with that error.
//   4. Job FAILED (or EXPIRED, ...): FAILED with the job's error; CANCELLED: CANCELLED with
//      error {1, ...}. endTime is set on every end.
// Cancel: a pipeline without a job yet ends CANCELLED at once; otherwise it becomes CANCELLING
// and its job is cancelled; step 4 ends it. Delete (of an ended pipeline) keeps its job and model.
//
// Crash safety (kill -9 at any point loses nothing and does nothing twice): step 1 looks for a job
// labelled with the pipeline before creating one, so a job created just before a crash is
// adopted; step 3 picks the new model's id and stores it before the upload, and the registry
// returns the version a pipeline already registered (ModelUpload::training_pipeline); a
// CANCELLING pipeline's job is cancelled again on each pass until it ends. Start() must run after
// JobController::Start (which re-adopts the jobs).
//
// Thread-safety: all methods may be called concurrently; one mutex serialises the steps.
#pragma once

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "common/periodic_thread.h"
#include "common/status.h"
#include "controller/job_controller.h"
#include "controller/model_registry.h"
#include "controller/stored_resource.h"
#include "store/resource_store.h"

namespace trainyard::controller {

// The label that ties a backing job to its pipeline (value: the pipeline's id).
inline constexpr char kPipelineLabel[] = "trainyard-training-pipeline";

// google.cloud.aiplatform.v1.PipelineState, for the list filter (state="PIPELINE_STATE_RUNNING").
const store::StateVocabulary& PipelineStates();

struct TrainingPipelineOptions {
  // Where pipelines without trainingTaskInputs.baseOutputDirectory write:
  // <staging_bucket>/aiplatform-custom-training-<pipeline id> (as the SDK's staging bucket).
  std::string staging_bucket = "gs://trainyard-staging";
  // How often running pipelines are polled; 0 = no thread (tests call PollOnce).
  std::chrono::milliseconds poll_interval{500};
  StoredResourceController::Clock clock;  // default: the system clock
};

class TrainingPipelineController {
 public:
  // `store`, `jobs` and `models` must outlive the controller.
  TrainingPipelineController(store::ResourceStore* store, JobController* jobs,
                             ModelRegistry* models, TrainingPipelineOptions options);
  ~TrainingPipelineController();

  // Loads the pipelines that have not ended and starts the poll thread. Only store errors fail it.
  Status Start();
  // Stops the poll thread (backing jobs keep running; a later Start resumes their pipelines).
  void Stop();

  // The pipelines as stored resources, for get, list and delete.
  StoredResourceController& stored() { return pipelines_; }

  // Decodes and checks a create request (spec::DecodeTrainingPipeline, the backing job's
  // JobController::Validate with trainingTaskInputs paths, parentModel exists, modelId names
  // neither a model nor the model of another pipeline that has not ended), stores the pipeline
  // QUEUED and starts its job. Returns the pipeline as stored (once stored, never an error: a
  // job that cannot start ends the pipeline FAILED). INVALID_ARGUMENT / NOT_FOUND (parentModel)
  // / ALREADY_EXISTS (modelId) with nothing stored otherwise. `creator` (when given) is stored
  // as its trainyardInfo.creator and given to its backing job and the model it uploads.
  StatusOr<nlohmann::json> Create(const std::string& parent, const std::string& body,
                                  const std::optional<spec::Creator>& creator = std::nullopt);
  // OK once the pipeline is CANCELLING or CANCELLED; FAILED_PRECONDITION if it already ended;
  // NOT_FOUND if unknown.
  Status Cancel(const std::string& name);

  // One pass over every pipeline that has not ended (the thread's body; tests call it).
  void PollOnce();

 private:
  // ALREADY_EXISTS when a pipeline of `parent` that has not ended will upload `model_id`; mu_ held.
  Status CheckModelIdUnclaimed(const std::string& parent, const std::string& model_id);
  // Runs the step the pipeline is at (steps 1-4 above); mu_ held. Errors are transient (the
  // store): the next pass retries.
  Status Advance(const std::string& name);
  Status StartJob(const std::string& name, const nlohmann::json& pipeline);
  Status Mirror(const std::string& name, const store::ResourceRecord& pipeline,
                const spec::CustomJob& job);
  Status Succeed(const std::string& name, const nlohmann::json& pipeline, nlohmann::json runtime);
  // Stores the pipeline's end: `state` with `error` (code 0: none), endTime; drops it from active_.
  Status End(const std::string& name, const std::string& state, int code,
             const std::string& message, const nlohmann::json& model = nullptr);
  // The backing job a create of `pipeline` (named `name`) asks for.
  StatusOr<spec::CustomJob> JobFor(const std::string& name, const nlohmann::json& pipeline) const;

  store::ResourceStore* store_;
  JobController* jobs_;
  ModelRegistry* models_;
  TrainingPipelineOptions options_;
  StoredResourceController pipelines_;

  std::mutex mu_;                 // the steps
  std::set<std::string> active_;  // pipelines that have not ended

  PeriodicThread poller_;  // PollOnce() every options_.poll_interval
};

}  // namespace trainyard::controller
