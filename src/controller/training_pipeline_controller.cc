#include "controller/training_pipeline_controller.h"

#include "common/time.h"
#include "controller/backing_job.h"
#include "replica_contract/replica_contract.h"
#include "spec/custom_job_validation.h"
#include "spec/model.h"
#include "spec/training_pipeline.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;

constexpr char kQueued[] = "PIPELINE_STATE_QUEUED";
constexpr char kSucceeded[] = "PIPELINE_STATE_SUCCEEDED";
constexpr char kFailed[] = "PIPELINE_STATE_FAILED";
constexpr char kCancelling[] = "PIPELINE_STATE_CANCELLING";
constexpr char kCancelled[] = "PIPELINE_STATE_CANCELLED";

bool PipelineEnded(const json& pipeline) {
  const std::string state = pipeline.value("state", "");
  return state == kSucceeded || state == kFailed || state == kCancelled;
}

ResourceType PipelineType() {
  ResourceType t;
  t.kind = std::string(spec::kTrainingPipelines);
  t.noun = "TrainingPipeline";
  t.decode = [](const std::string& body) { return spec::DecodeTrainingPipeline(body); };
  t.states = &PipelineStates();
  t.initial_state = kQueued;
  t.ended_states = {kSucceeded, kFailed, kCancelled};
  return t;
}

std::string IdOf(const std::string& name) { return ResourceIdOf(name); }
std::string ParentOf(const std::string& name) {
  return ResourceParentOf(name, std::string(spec::kTrainingPipelines));
}
std::string BackingJob(const json& pipeline) {
  return pipeline.value("trainingTaskMetadata", json::object()).value("backingCustomJob", "");
}

// A job's error with the pipeline's field paths: the job's spec is trainingTaskInputs.
Status AsPipelineError(const Status& s) {
  if (s.ok()) return s;
  auto rebase = [](std::string text) {
    if (size_t at = text.find("jobSpec"); at != std::string::npos) {
      text.replace(at, 7, "trainingTaskInputs");
    }
    return text;
  };
  Status out(s.code(), rebase(s.message()));
  for (const FieldViolation& v : s.field_violations()) {
    out = out.WithFieldViolation(rebase(v.field), v.description);
  }
  return out;
}

}  // namespace

const store::StateVocabulary& PipelineStates() {
  static const store::StateVocabulary kStates{"pipeline state", "PIPELINE_STATE_RUNNING",
                                              [](std::string_view name) -> std::optional<int64_t> {
                                                const int n = spec::ParsePipelineState(name);
                                                return n < 0 ? std::nullopt
                                                             : std::optional<int64_t>(n);
                                              }};
  return kStates;
}

TrainingPipelineController::TrainingPipelineController(store::ResourceStore* store,
                                                       JobController* jobs, ModelRegistry* models,
                                                       TrainingPipelineOptions options)
    : store_(store),
      jobs_(jobs),
      models_(models),
      options_(std::move(options)),
      pipelines_(store, PipelineType(), options_.clock) {
  while (options_.staging_bucket.ends_with('/')) options_.staging_bucket.pop_back();
}

TrainingPipelineController::~TrainingPipelineController() { Stop(); }

Status TrainingPipelineController::Start() {
  TY_ASSIGN_OR_RETURN(std::vector<store::ResourceRecord> all,
                      store_->ListAllResources(std::string(spec::kTrainingPipelines)));
  {
    std::lock_guard lock(mu_);
    for (const store::ResourceRecord& r : all) {
      if (!PipelineEnded(r.body)) active_.insert(r.name);
    }
  }
  if (options_.poll_interval.count() > 0) {
    poller_.Start(options_.poll_interval, [this] { PollOnce(); });
  }
  return Status::Ok();
}

void TrainingPipelineController::Stop() { poller_.Stop(); }

void TrainingPipelineController::PollOnce() {
  std::lock_guard lock(mu_);
  const std::set<std::string> active = active_;
  for (const std::string& name : active) {
    (void)Advance(name);  // a failed step (the store) is retried by the next pass
  }
}

StatusOr<spec::CustomJob> TrainingPipelineController::JobFor(const std::string& name,
                                                             const json& pipeline) const {
  TY_ASSIGN_OR_RETURN(spec::CustomJobSpec job_spec, spec::TrainingTaskSpec(pipeline));
  if (job_spec.base_output_directory.empty()) {
    job_spec.base_output_directory =
        options_.staging_bucket + "/aiplatform-custom-training-" + IdOf(name);
  }
  spec::CustomJob job;
  job.display_name = pipeline.value("displayName", "") + "-custom-job";
  if (job.display_name.size() > spec::kMaxDisplayNameChars) {
    job.display_name.resize(spec::kMaxDisplayNameChars);
  }
  job.labels = pipeline.value("labels", std::map<std::string, std::string>());
  job.labels[kPipelineLabel] = IdOf(name);
  job.job_spec = std::move(job_spec);
  return job;
}

Status TrainingPipelineController::CheckModelIdUnclaimed(const std::string& parent,
                                                         const std::string& model_id) {
  for (const std::string& other : active_) {
    if (!other.starts_with(parent + "/")) continue;
    StatusOr<json> p = pipelines_.Get(other);
    if (p.ok() && p->value("modelId", "") == model_id && !p->contains("parentModel")) {
      return AlreadyExistsError("modelId: TrainingPipeline " + other +
                                " (not ended) will upload Model " + parent + "/" +
                                std::string(spec::kModels) + "/" + model_id +
                                "; choose another modelId, or set parentModel to add a version "
                                "after it has succeeded");
    }
  }
  return Status::Ok();
}

StatusOr<json> TrainingPipelineController::Create(const std::string& parent,
                                                  const std::string& body,
                                                  const std::optional<spec::Creator>& creator) {
  TY_ASSIGN_OR_RETURN(json pipeline, spec::DecodeTrainingPipeline(body));
  if (creator) spec::SetCreator(pipeline, *creator);
  const std::string collection = parent + "/" + std::string(spec::kTrainingPipelines) + "/";
  TY_ASSIGN_OR_RETURN(spec::CustomJob job, JobFor(collection + "0", pipeline));
  TY_RETURN_IF_ERROR(AsPipelineError(jobs_->Validate(parent, job)));
  ModelUpload probe{
      parent, pipeline.value("modelId", ""), pipeline.value("parentModel", ""), {}, ""};
  if (!probe.parent_model.empty()) {
    TY_ASSIGN_OR_RETURN(std::string model, models_->Target(&probe));
    if (models_->Get(model, "").status().code() == StatusCode::kNotFound) {
      return NotFoundError("parentModel: Model " + model + " not found");
    }
  } else if (!probe.model_id.empty()) {
    TY_ASSIGN_OR_RETURN(std::string model, models_->Target(&probe));
    if (models_->Get(model, "").ok()) {
      return AlreadyExistsError("modelId: Model " + model +
                                " already exists; to add a version, set parentModel instead");
    }
  }
  // Under mu_ from the check to active_.insert, so two creates cannot both claim the modelId.
  std::lock_guard lock(mu_);
  if (!probe.model_id.empty() && probe.parent_model.empty()) {
    TY_RETURN_IF_ERROR(CheckModelIdUnclaimed(parent, probe.model_id));
  }
  TY_ASSIGN_OR_RETURN(json stored, pipelines_.Insert(parent, pipeline, ""));
  const std::string name = stored.value("name", "");
  active_.insert(name);
  (void)Advance(name);  // once stored, never an error: the poll pass retries
  StatusOr<json> now = pipelines_.Get(name);
  return now.ok() ? *now : stored;
}

Status TrainingPipelineController::Cancel(const std::string& name) {
  std::lock_guard lock(mu_);
  TY_ASSIGN_OR_RETURN(json pipeline, pipelines_.Get(name));
  if (PipelineEnded(pipeline)) {
    return FailedPreconditionError("TrainingPipeline " + name + " already ended (" +
                                   pipeline.value("state", "") + "); nothing to cancel");
  }
  const std::string job = BackingJob(pipeline);
  if (job.empty()) {
    return End(name, kCancelled, static_cast<int>(StatusCode::kCancelled),
               "the training pipeline was cancelled before its job started");
  }
  TY_RETURN_IF_ERROR(pipelines_
                         .Mutate(name,
                                 [](json& p, json&) {
                                   if (!PipelineEnded(p)) p["state"] = kCancelling;
                                   return Status::Ok();
                                 })
                         .status());
  Status s = jobs_->Cancel(job);
  if (!s.ok() && s.code() != StatusCode::kFailedPrecondition && s.code() != StatusCode::kNotFound) {
    return s;
  }
  (void)Advance(name);  // a job cancelled while queued has already ended
  return Status::Ok();
}

Status TrainingPipelineController::Advance(const std::string& name) {
  StatusOr<store::ResourceRecord> got = pipelines_.GetRecord(name);
  if (got.status().code() == StatusCode::kNotFound) {
    active_.erase(name);
    return Status::Ok();
  }
  TY_RETURN_IF_ERROR(got.status());
  const json& pipeline = got->body;
  if (PipelineEnded(pipeline)) {
    active_.erase(name);
    return Status::Ok();
  }
  const std::string job_name = BackingJob(pipeline);
  if (job_name.empty()) return StartJob(name, pipeline);
  StatusOr<spec::CustomJob> job = jobs_->Get(job_name);
  if (job.status().code() == StatusCode::kNotFound) {
    return End(name, kFailed, static_cast<int>(StatusCode::kFailedPrecondition),
               "the backing CustomJob " + job_name + " was deleted while the pipeline ran");
  }
  TY_RETURN_IF_ERROR(job.status());
  if (pipeline.value("state", "") == kCancelling && !spec::IsTerminal(job->state) &&
      job->state != spec::JobState::kCancelling) {
    (void)jobs_->Cancel(job_name);  // a cancel a crash interrupted
  }
  return Mirror(name, *got, *job);
}

Status TrainingPipelineController::StartJob(const std::string& name, const json& pipeline) {
  StatusOr<spec::CustomJob> request = JobFor(name, pipeline);
  if (!request.ok()) {
    return End(name, kFailed, static_cast<int>(request.status().code()),
               request.status().message());
  }
  StatusOr<spec::CustomJob> started =
      AdoptOrCreateBackingJob(jobs_, ParentOf(name), kPipelineLabel, IdOf(name),
                              std::move(*request), spec::CreatorOf(pipeline));
  if (!started.ok()) {
    const Status s = AsPipelineError(started.status());
    if (!IsRefusal(s)) return s;
    return End(name, kFailed, static_cast<int>(s.code()),
               "the backing CustomJob could not be created: " + s.message());
  }
  const spec::CustomJob& job = *started;
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, pipelines_.Mutate(name, [&](json& p, json&) {
    p["trainingTaskMetadata"] = {{"backingCustomJob", job.name}};
    return Status::Ok();
  }));
  return Mirror(name, r, job);
}

Status TrainingPipelineController::Mirror(const std::string& name,
                                          const store::ResourceRecord& record,
                                          const spec::CustomJob& job) {
  const json& pipeline = record.body;
  const int code = job.error ? job.error->code : 0;
  const std::string message = job.error ? job.error->message : "";
  switch (job.state) {
    case spec::JobState::kSucceeded:
      return Succeed(name, pipeline, record.runtime);
    case spec::JobState::kCancelled:
      return End(name, kCancelled, static_cast<int>(StatusCode::kCancelled),
                 message.empty() ? "the training pipeline was cancelled" : message);
    default:
      break;
  }
  if (spec::IsTerminal(job.state)) {
    return End(name, kFailed, code != 0 ? code : static_cast<int>(StatusCode::kInternal),
               "the backing CustomJob " + job.name + " ended " +
                   std::string(spec::JobStateName(job.state)) +
                   (message.empty() ? "" : ": " + message));
  }
  std::string state(spec::PipelineStateOfJob(job.state));
  if (pipeline.value("state", "") == kCancelling) state = kCancelling;
  const std::string start = job.start_time ? FormatTimestamp(*job.start_time) : "";
  if (state == pipeline.value("state", "") && start == pipeline.value("startTime", "")) {
    return Status::Ok();
  }
  return pipelines_
      .Mutate(name,
              [&](json& p, json&) {
                if (PipelineEnded(p)) return Status::Ok();
                p["state"] = state;
                if (!start.empty()) p["startTime"] = start;
                return Status::Ok();
              })
      .status();
}

Status TrainingPipelineController::Succeed(const std::string& name, const json& pipeline,
                                           json runtime) {
  if (!pipeline.contains("modelToUpload")) return End(name, kSucceeded, 0, "");
  ModelUpload upload{ParentOf(name),
                     pipeline.value("modelId", ""),
                     pipeline.value("parentModel", ""),
                     pipeline["modelToUpload"],
                     name,
                     spec::CreatorOf(pipeline)};
  if (!upload.model.contains("artifactUri")) {
    TY_ASSIGN_OR_RETURN(spec::CustomJob job, JobFor(name, pipeline));
    upload.model["artifactUri"] =
        replica_contract::OutputDirsFor(job.job_spec.base_output_directory, "").model_dir;
  }
  const bool new_id = upload.model_id.empty() && upload.parent_model.empty();
  if (new_id) upload.model_id = runtime.value("modelId", "");
  StatusOr<std::string> target = models_->Target(&upload);
  if (!target.ok()) {
    return End(name, kFailed, static_cast<int>(target.status().code()),
               "the model upload failed: " + target.status().message());
  }
  if (new_id && runtime.value("modelId", "") != upload.model_id) {
    // The id is stored before the upload, so that a retry after a crash uploads to it again.
    TY_RETURN_IF_ERROR(pipelines_
                           .Mutate(name,
                                   [&](json&, json& rt) {
                                     rt["modelId"] = upload.model_id;
                                     return Status::Ok();
                                   })
                           .status());
  }
  StatusOr<UploadedModel> uploaded = models_->Upload(upload);
  if (!uploaded.ok()) {
    if (!IsRefusal(uploaded.status())) return uploaded.status();
    return End(name, kFailed, static_cast<int>(uploaded.status().code()),
               "the model upload failed: " + uploaded.status().message());
  }
  json model = pipeline["modelToUpload"];
  model["name"] = uploaded->model;
  model["versionId"] = uploaded->version_id;
  return End(name, kSucceeded, 0, "", model);
}

Status TrainingPipelineController::End(const std::string& name, const std::string& state, int code,
                                       const std::string& message, const json& model) {
  const std::string now =
      FormatTimestamp(options_.clock ? options_.clock() : std::chrono::system_clock::now());
  TY_RETURN_IF_ERROR(pipelines_
                         .Mutate(name,
                                 [&](json& p, json&) {
                                   if (PipelineEnded(p)) return Status::Ok();
                                   p["state"] = state;
                                   if (code != 0) {
                                     p["error"] = {{"code", code}, {"message", message}};
                                   } else {
                                     p.erase("error");
                                   }
                                   p["endTime"] = now;
                                   if (!model.is_null()) p["modelToUpload"] = model;
                                   return Status::Ok();
                                 })
                         .status());
  active_.erase(name);
  return Status::Ok();
}

}  // namespace trainyard::controller
