#include "controller/batch_prediction_controller.h"

#include "common/bucket_path.h"
#include "common/time.h"
#include "controller/backing_job.h"
#include "controller/batch_prediction_files.h"
#include "controller/endpoint_internal.h"
#include "spec/batch_prediction_job.h"
#include "spec/endpoint.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;

constexpr char kPending[] = "JOB_STATE_PENDING";
constexpr char kRunning[] = "JOB_STATE_RUNNING";
constexpr char kSucceeded[] = "JOB_STATE_SUCCEEDED";
constexpr char kFailed[] = "JOB_STATE_FAILED";
constexpr char kCancelling[] = "JOB_STATE_CANCELLING";
constexpr char kCancelled[] = "JOB_STATE_CANCELLED";

bool Ended(const json& job) {
  const std::string s = job.value("state", "");
  return s == kSucceeded || s == kFailed || s == kCancelled;
}

ResourceType BatchType() {
  ResourceType t;
  t.kind = std::string(spec::kBatchPredictionJobs);
  t.noun = "BatchPredictionJob";
  t.decode = [](const std::string& body) { return spec::DecodeBatchPredictionJob(body); };
  t.states = &store::StateVocabulary::JobStates();
  t.initial_state = kPending;
  t.ended_states = {kSucceeded, kFailed, kCancelled};
  return t;
}

std::string JobIdOf(const std::string& name) { return ResourceIdOf(name); }
std::string JobParentOf(const std::string& name) {
  return ResourceParentOf(name, std::string(spec::kBatchPredictionJobs));
}
std::string BackingJob(const json& job) {
  return job.value("trainyardInfo", json::object()).value("backingCustomJob", "");
}

// How many shards the replicas write: one per replica natively, one (the feeder's) otherwise.
int ShardsOf(const json& serving, const spec::BatchPredictionSpec& s) {
  return serving.value("runtime", "") == "container" ? 1 : s.starting_replicas;
}

json StatsJson(const BatchCounts& c) {
  const int64_t incomplete = std::max<int64_t>(0, c.total - c.successful - c.failed);
  return {{"successfulCount", std::to_string(c.successful)},
          {"failedCount", std::to_string(c.failed)},
          {"incompleteCount", std::to_string(incomplete)}};
}

}  // namespace

BatchPredictionController::BatchPredictionController(store::ResourceStore* store,
                                                     JobController* jobs, ModelRegistry* models,
                                                     BatchPredictionOptions options)
    : store_(store),
      jobs_(jobs),
      models_(models),
      options_(std::move(options)),
      jobs_of_kind_(store, BatchType(), options_.clock) {
  while (options_.staging_bucket.ends_with('/')) options_.staging_bucket.pop_back();
  if (!options_.is_bert_classifier) {
    options_.is_bert_classifier = endpoint_internal::IsBertClassifierArtifact;
  }
}

BatchPredictionController::~BatchPredictionController() { Stop(); }

Status BatchPredictionController::Start() {
  TY_ASSIGN_OR_RETURN(std::vector<store::ResourceRecord> all,
                      store_->ListAllResources(std::string(spec::kBatchPredictionJobs)));
  {
    std::lock_guard lock(mu_);
    for (const store::ResourceRecord& r : all) {
      if (!Ended(r.body)) active_.insert(r.name);
    }
  }
  if (options_.poll_interval.count() > 0) {
    poller_.Start(options_.poll_interval, [this] { PollOnce(); });
  }
  return Status::Ok();
}

void BatchPredictionController::Stop() { poller_.Stop(); }

void BatchPredictionController::PollOnce() {
  std::lock_guard lock(mu_);
  const std::set<std::string> active = active_;
  for (const std::string& name : active) (void)Advance(name);
}

StatusOr<json> BatchPredictionController::ResolveModel(const std::string& parent,
                                                       const std::string& model) {
  std::string name = model, version;
  if (size_t at = name.find('@'); at != std::string::npos) {
    version = name.substr(at + 1);
    name.resize(at);
  }
  if (name.find('/') == std::string::npos) name = parent + "/models/" + name;
  if (!name.starts_with(parent + "/models/")) {
    return InvalidFieldError("model", "'" + model + "' is not a model of " + parent +
                                          "; name one as " + parent + "/models/MODEL_ID[@VERSION]");
  }
  StatusOr<json> m = models_->Get(name, version);
  if (m.status().code() == StatusCode::kNotFound) {
    return NotFoundError("model: " + m.status().message());
  }
  return m;
}

std::string BatchPredictionController::StagingDir(const std::string& name) const {
  return options_.staging_bucket + "/batch-prediction-" + JobIdOf(name);
}

StatusOr<json> BatchPredictionController::Create(const std::string& parent, const std::string& body,
                                                 const std::optional<spec::Creator>& creator) {
  TY_ASSIGN_OR_RETURN(json job, spec::DecodeBatchPredictionJob(body));
  TY_ASSIGN_OR_RETURN(spec::BatchPredictionSpec s, spec::BatchPredictionSpecOf(job));
  TY_ASSIGN_OR_RETURN(json model, ResolveModel(parent, s.model));
  TY_ASSIGN_OR_RETURN(json serving, ServingOf(model));
  for (size_t i = 0; i < s.source_uris.size(); ++i) {
    std::string uri = s.source_uris[i];
    if (size_t star = uri.find('*'); star != std::string::npos) uri.resize(star);
    if (Status b = CheckBucketExists(uri); !b.ok()) {
      return Status(b.code(),
                    "inputConfig.gcsSource.uris[" + std::to_string(i) + "]: " + b.message());
    }
  }
  if (Status b = CheckBucketExists(s.output_uri_prefix); !b.ok()) {
    return Status(b.code(), "outputConfig.gcsDestination.outputUriPrefix: " + b.message());
  }
  const std::string collection = parent + "/" + std::string(spec::kBatchPredictionJobs) + "/";
  TY_ASSIGN_OR_RETURN(spec::CustomJob probe, JobFor(collection + "0", job, serving));
  TY_RETURN_IF_ERROR(jobs_->Validate(parent, probe).WithPrefix("dedicatedResources: "));
  job["modelVersionId"] = model.value("versionId", "");
  if (creator) spec::SetCreator(job, *creator);
  const std::string id = jobs_of_kind_.NewId();
  const TimePoint now = options_.clock ? options_.clock() : std::chrono::system_clock::now();
  const std::string out =
      s.output_uri_prefix + "/" + spec::PredictionDirName(model.value("displayName", ""), now);
  job["outputInfo"] = {{"gcsOutputDirectory", out}};
  std::lock_guard lock(mu_);
  TY_ASSIGN_OR_RETURN(
      json stored, jobs_of_kind_.Insert(parent, job, id,
                                        {{"serving", serving}, {"shards", ShardsOf(serving, s)}}));
  const std::string name = stored.value("name", "");
  active_.insert(name);
  (void)Advance(name);  // once stored, never an error: the poll pass retries
  StatusOr<json> now_stored = jobs_of_kind_.Get(name);
  return now_stored.ok() ? *now_stored : stored;
}

Status BatchPredictionController::Cancel(const std::string& name) {
  std::lock_guard lock(mu_);
  TY_ASSIGN_OR_RETURN(json job, jobs_of_kind_.Get(name));
  if (Ended(job)) {
    return FailedPreconditionError("BatchPredictionJob " + name + " already ended (" +
                                   job.value("state", "") + "); nothing to cancel");
  }
  const std::string backing = BackingJob(job);
  if (backing.empty()) {
    return End(name, kCancelled, static_cast<int>(StatusCode::kCancelled),
               "the batch prediction job was cancelled before it started", nullptr);
  }
  TY_RETURN_IF_ERROR(jobs_of_kind_
                         .Mutate(name,
                                 [](json& j, json&) {
                                   if (!Ended(j)) j["state"] = kCancelling;
                                   return Status::Ok();
                                 })
                         .status());
  Status s = jobs_->Cancel(backing);
  if (!s.ok() && s.code() != StatusCode::kFailedPrecondition && s.code() != StatusCode::kNotFound) {
    return s;
  }
  (void)Advance(name);
  return Status::Ok();
}

Status BatchPredictionController::Advance(const std::string& name) {
  StatusOr<store::ResourceRecord> got = jobs_of_kind_.GetRecord(name);
  if (got.status().code() == StatusCode::kNotFound) {
    active_.erase(name);
    return Status::Ok();
  }
  TY_RETURN_IF_ERROR(got.status());
  if (Ended(got->body)) {
    active_.erase(name);
    return Status::Ok();
  }
  const std::string backing = BackingJob(got->body);
  if (backing.empty()) return StartJob(name, *got);
  StatusOr<spec::CustomJob> job = jobs_->Get(backing);
  if (job.status().code() == StatusCode::kNotFound) {
    return End(name, kFailed, static_cast<int>(StatusCode::kFailedPrecondition),
               "the backing CustomJob " + backing + " was deleted while the job ran", nullptr);
  }
  TY_RETURN_IF_ERROR(job.status());
  if (got->body.value("state", "") == kCancelling && !spec::IsTerminal(job->state) &&
      job->state != spec::JobState::kCancelling) {
    (void)jobs_->Cancel(backing);  // a cancel a crash interrupted
  }
  return Mirror(name, *got, *job);
}

Status BatchPredictionController::StartJob(const std::string& name,
                                           const store::ResourceRecord& record) {
  StatusOr<spec::CustomJob> request =
      JobFor(name, record.body, record.runtime.value("serving", json::object()));
  if (!request.ok()) {
    return End(name, kFailed, static_cast<int>(request.status().code()), request.status().message(),
               nullptr);
  }
  StatusOr<spec::CustomJob> started =
      AdoptOrCreateBackingJob(jobs_, JobParentOf(name), kBatchPredictionLabel, JobIdOf(name),
                              std::move(*request), spec::CreatorOf(record.body));
  if (!started.ok()) {
    if (!IsRefusal(started.status())) return started.status();
    return End(name, kFailed, static_cast<int>(started.status().code()),
               "the backing CustomJob could not be created: " + started.status().message(),
               nullptr);
  }
  const spec::CustomJob& job = *started;
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, jobs_of_kind_.Mutate(name, [&](json& j, json&) {
    j["trainyardInfo"]["backingCustomJob"] = job.name;
    return Status::Ok();
  }));
  return Mirror(name, r, job);
}

Status BatchPredictionController::Mirror(const std::string& name,
                                         const store::ResourceRecord& record,
                                         const spec::CustomJob& backing) {
  const json& job = record.body;
  const std::string message = backing.error ? backing.error->message : "";
  if (backing.state == spec::JobState::kSucceeded) return Succeed(name, record, backing);
  if (backing.state == spec::JobState::kCancelled) {
    return End(name, kCancelled, static_cast<int>(StatusCode::kCancelled),
               message.empty() ? "the batch prediction job was cancelled" : message, &backing);
  }
  if (spec::IsTerminal(backing.state)) {
    const int code = backing.error && backing.error->code != 0
                         ? backing.error->code
                         : static_cast<int>(StatusCode::kInternal);
    return End(name, kFailed, code,
               "the backing CustomJob " + backing.name + " ended " +
                   std::string(spec::JobStateName(backing.state)) +
                   (message.empty() ? "" : ": " + message),
               &backing);
  }
  std::string state = backing.state == spec::JobState::kRunning ? kRunning : kPending;
  if (job.value("state", "") == kCancelling) state = kCancelling;
  // Every shard is written: the job is done even while the backing job still stops (a model
  // container that ignores SIGTERM holds it for the kill grace).
  const BatchCounts progress = ReadBatchProgress(StagingDir(name));
  const int shards = record.runtime.value("shards", 0);
  if (state == kRunning && shards > 0 && progress.shards_done >= shards) {
    return Succeed(name, record, backing);
  }
  const std::string start = backing.start_time ? FormatTimestamp(*backing.start_time) : "";
  json stats = job.value("completionStats", json::object());
  if (state == kRunning && progress.shards_reported > 0) stats = StatsJson(progress);
  if (state == job.value("state", "") && start == job.value("startTime", "") &&
      stats == job.value("completionStats", json::object())) {
    return Status::Ok();
  }
  return jobs_of_kind_
      .Mutate(name,
              [&](json& j, json&) {
                if (Ended(j)) return Status::Ok();
                j["state"] = state;
                if (!start.empty()) j["startTime"] = start;
                if (!stats.empty()) j["completionStats"] = stats;
                return Status::Ok();
              })
      .status();
}

Status BatchPredictionController::Succeed(const std::string& name,
                                          const store::ResourceRecord& record,
                                          const spec::CustomJob& backing) {
  const std::string out =
      record.body.value("outputInfo", json::object()).value("gcsOutputDirectory", "");
  if (Status moved = MoveBatchShards(StagingDir(name), out); !moved.ok()) {
    if (moved.code() != StatusCode::kFailedPrecondition &&
        moved.code() != StatusCode::kInvalidArgument) {
      return moved;  // I/O: the next pass retries
    }
    return End(name, kFailed, static_cast<int>(moved.code()),
               "the predictions could not be collected: " + moved.message(), &backing);
  }
  const BatchCounts c = ReadBatchProgress(StagingDir(name));
  if (c.successful == 0 && c.failed > 0) {
    return End(name, kFailed, static_cast<int>(StatusCode::kInvalidArgument),
               "all " + std::to_string(c.failed) + " instances failed; see " + out + "/" +
                   std::string(spec::kErrorsFilePrefix) + "*",
               &backing, StatsJson(c));
  }
  return End(name, kSucceeded, 0, "", &backing, StatsJson(c));
}

Status BatchPredictionController::End(const std::string& name, const std::string& state, int code,
                                      const std::string& message, const spec::CustomJob* backing,
                                      const json& stats) {
  const TimePoint now = options_.clock ? options_.clock() : std::chrono::system_clock::now();
  double replica_hours = 0, cost = 0;
  if (backing && backing->start_time) {
    const TimePoint end = backing->end_time ? *backing->end_time : now;
    const double hours = std::chrono::duration<double>(end - *backing->start_time).count() / 3600;
    int64_t replicas = 0;
    for (const auto& p : backing->job_spec.worker_pool_specs) replicas += p.replica_count;
    replica_hours = hours * static_cast<double>(replicas);
    if (backing->trainyard_info) cost = backing->trainyard_info->estimated_cost_usd;
  }
  TY_RETURN_IF_ERROR(
      jobs_of_kind_
          .Mutate(name,
                  [&](json& j, json&) {
                    if (Ended(j)) return Status::Ok();
                    j["state"] = state;
                    if (code != 0) {
                      j["error"] = {{"code", code}, {"message", message}};
                    } else {
                      j.erase("error");
                    }
                    if (!stats.is_null()) {
                      j["completionStats"] = stats;
                      const int64_t failed = std::stoll(stats.value("failedCount", "0"));
                      if (failed > 0 && state == kSucceeded) {
                        j["partialFailures"] = json::array(
                            {{{"code", static_cast<int>(StatusCode::kInvalidArgument)},
                              {"message", std::to_string(failed) + " instance(s) failed; see " +
                                              j["outputInfo"].value("gcsOutputDirectory", "") +
                                              "/" + std::string(spec::kErrorsFilePrefix) + "*"}}});
                      }
                    }
                    // A job that ran between two passes was never seen RUNNING.
                    if (backing && backing->start_time && !j.contains("startTime")) {
                      j["startTime"] = FormatTimestamp(*backing->start_time);
                    }
                    j["endTime"] = FormatTimestamp(now);
                    j["resourcesConsumed"] = {{"replicaHours", replica_hours}};
                    if (backing) j["trainyardInfo"]["estimatedCostUsd"] = cost;
                    return Status::Ok();
                  })
          .status());
  active_.erase(name);
  return Status::Ok();
}

}  // namespace trainyard::controller
