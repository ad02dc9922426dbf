// BatchPredictionController: the single writer of BatchPredictionJobs
// (spec/batch_prediction_job.h). A job is a stored resource (StoredResourceController, kind
// "batchPredictionJobs") that runs one backing CustomJob through the JobController, so it gets
// the executor the server runs (host processes, containers, Slurm), replica users, cgroup limits,
// logs (Cloud Logging of the backing job), restarts and cost like any custom job.
//
// The runtimes (batch_prediction_backing_job.cc), chosen from the model as endpoints choose them
// (controller/endpoint_controller.h); machine type: the request's, else
// options.default_machine_type:
//   - native (a BERT classifier `trainyard-bert train` exported; no container, trainyard/bert-serve
//     or one of Vertex's prebuilt prediction images): dedicatedResources.startingReplicaCount
//     replicas (one in worker pool 0, as Vertex requires, the others in pool 1) each run
//     `trainyard-bert batch-predict` (image trainyard/bert-batch-predict) on their shard of the
//     instances (instance i goes to shard i mod N); the primary replica exits once every shard is
//     done, which ends the job;
//   - custom container (any other containerSpec.imageUri): pool 1 runs startingReplicaCount
//     replicas of the model's serving container (its command, args, env, routes and Vertex's
//     serving variables, AIP_HTTP_PORT being the port the executor reserved for the replica:
//     $(TRAINYARD_REPLICA_PORT)); pool 0's one replica, `trainyard-bert batch-predict
//     --model-pool 1`, waits for their health route and sends them every instance, one batch per
//     replica at a time, writing one shard; its exit ends the job and stops the containers.
// A prebuilt prediction image over artifacts that are not a BERT classifier is refused at create
// (FAILED_PRECONDITION saying what to use).
//
// Steps, each one store transaction, driven by Create and by a poll pass over the jobs that have
// not ended:
//   1. PENDING, no job: create the backing job (labels: the job's plus
//      trainyard-batch-prediction=<id>; baseOutputDirectory <staging bucket>/batch-prediction-<id>,
//      where the replicas write their shards and progress) and record it in
//      trainyardInfo.backingCustomJob, with outputInfo.gcsOutputDirectory.
//   2. While it runs: state mirrors the job's (QUEUED/PENDING -> PENDING, RUNNING -> RUNNING with
//      startTime); completionStats from the replicas' progress files.
//   3. Job SUCCEEDED, or every shard's progress file says done (the backing job may still be
//      stopping a model container that ignores SIGTERM): the shards move from the staging directory
//      into outputInfo.gcsOutputDirectory (<outputUriPrefix>/prediction-<model>-<time>/), the
//      counts become completionStats, failed instances partialFailures (one entry naming the errors
//      files): SUCCEEDED (as Vertex: a partial success is SUCCEEDED, which every client's poll
//      loop ends on); FAILED when every instance failed.
//   4. Job FAILED (or EXPIRED): FAILED with the job's error; CANCELLED: CANCELLED, error code 1.
//      endTime and resourcesConsumed.replicaHours are set on every end.
// Cancel: CANCELLING, the job is cancelled; step 4 ends it. Delete (of an ended job) keeps the
// backing job and the output files.
//
// Crash safety: step 1 adopts a job labelled with this job's id before creating one; step 3's
// moves are idempotent (a shard already moved is skipped) and the end is stored after them.
// Files a replica left in the staging directory are read beneath the bucket root without
// following links; anything but a regular shard file there fails the job naming it.
//
// Thread-safety: all methods may be called concurrently; one mutex serialises the steps.
#pragma once

#include <chrono>
#include <functional>
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

// The label that ties a backing job to its batch prediction job (value: the job's id).
inline constexpr char kBatchPredictionLabel[] = "trainyard-batch-prediction";
// The image whose entrypoint is `trainyard-bert batch-predict` (spec/image_catalog.h).
inline constexpr char kBatchPredictImage[] = "trainyard/bert-batch-predict:latest";

struct BatchPredictionOptions {
  std::string staging_bucket = "gs://trainyard-staging";
  std::string default_machine_type = "n1-standard-4";
  std::chrono::milliseconds poll_interval{500};  // 0 = no thread (tests call PollOnce)
  // Whether gs:// `artifact_uri` holds a BERT classifier; null = look at the files.
  std::function<bool(const std::string& artifact_uri)> is_bert_classifier;
  StoredResourceController::Clock clock;
};

class BatchPredictionController {
 public:
  // Everything given must outlive the controller.
  BatchPredictionController(store::ResourceStore* store, JobController* jobs, ModelRegistry* models,
                            BatchPredictionOptions options);
  ~BatchPredictionController();

  // Loads the jobs that have not ended and starts the poll thread (after JobController::Start).
  Status Start();
  void Stop();

  StoredResourceController& stored() { return jobs_of_kind_; }

  // Decodes and checks a create request (spec::DecodeBatchPredictionJob; the model and version
  // exist and can be run; the source and destination buckets exist; the backing job passes
  // JobController::Validate), stores the job PENDING and starts its backing job. Returns the job
  // as stored. INVALID_ARGUMENT / NOT_FOUND / FAILED_PRECONDITION naming the field, nothing
  // stored, otherwise.
  StatusOr<nlohmann::json> Create(const std::string& parent, const std::string& body,
                                  const std::optional<spec::Creator>& creator = std::nullopt);
  // OK once CANCELLING or CANCELLED; FAILED_PRECONDITION if it already ended; NOT_FOUND.
  Status Cancel(const std::string& name);

  void PollOnce();

 private:
  StatusOr<nlohmann::json> ResolveModel(const std::string& parent, const std::string& model);
  // How the model runs: {"runtime": "native", "storageUri"} or {"runtime": "container",
  // "imageUri", "command", "args", "env", "predictRoute", "healthRoute", "storageUri"};
  // FAILED_PRECONDITION (field "model") for a model Trainyard cannot run.
  StatusOr<nlohmann::json> ServingOf(const nlohmann::json& model) const;
  Status Advance(const std::string& name);
  Status StartJob(const std::string& name, const store::ResourceRecord& record);
  Status Mirror(const std::string& name, const store::ResourceRecord& record,
                const spec::CustomJob& backing);
  Status Succeed(const std::string& name, const store::ResourceRecord& record,
                 const spec::CustomJob& backing);
  Status End(const std::string& name, const std::string& state, int code,
             const std::string& message, const spec::CustomJob* backing,
             const nlohmann::json& stats = nullptr);
  // The backing job of `job` (named `name`) for the model as ServingOf found it.
  StatusOr<spec::CustomJob> JobFor(const std::string& name, const nlohmann::json& job,
                                   const nlohmann::json& serving) const;
  std::string StagingDir(const std::string& name) const;

  store::ResourceStore* store_;
  JobController* jobs_;
  ModelRegistry* models_;
  BatchPredictionOptions options_;
  StoredResourceController jobs_of_kind_;

  std::mutex mu_;
  std::set<std::string> active_;
  PeriodicThread poller_;
};

}  // namespace trainyard::controller
