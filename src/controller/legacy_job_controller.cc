#include "controller/legacy_job_controller.h"

#include <cctype>
#include <cstdio>
#include <functional>
#include <regex>

#include "common/time.h"
#include "controller/tuning_job_controller.h"
#include "protojson/parse.h"
#include "spec/custom_job_validation.h"
#include "spec/job_priority.h"
#include "spec/legacy_job_json.h"
#include "spec/legacy_translation.h"
#include "spec/resource_name.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;
using spec::LegacyJobState;

// The runtime key of the backing job's name as Create chose it, stored before the job is created
// ("backing" is set once it was).
constexpr const char* kPlannedBackingKey = "plannedBacking";

bool LegacyJobEnded(const json& job) {
  const auto state = spec::ParseLegacyJobState(job.value("state", ""));
  return state && spec::IsTerminal(*state);
}

ResourceType LegacyType() {
  ResourceType t;
  t.kind = kLegacyJobsKind;
  t.noun = "Job";
  t.decode = [](const std::string& body) { return protojson::ParseJson(body); };
  t.states = &LegacyJobStates();
  t.initial_state = "QUEUED";
  t.ended_states = {"SUCCEEDED", "FAILED", "CANCELLED"};
  t.patchable = {"labels"};
  t.check_patched = [](const json& job) {
    std::map<std::string, std::string> labels;
    const json given = job.value("labels", json::object());
    if (!given.is_object()) return InvalidFieldError("labels", "must be a map of strings");
    for (const auto& [k, v] : given.items()) {
      if (!v.is_string()) return InvalidFieldError("labels." + k, "must be a string");
      labels[k] = v.get<std::string>();
    }
    return spec::ValidateLabels(labels, "labels");
  };
  // AI Platform's own wording, which gcloud prints after "...is the subject of a conflict: ".
  t.duplicate_message = [](const std::string&) {
    return std::string("Field: job.job_id Error: A job with this id already exists.");
  };
  t.display_name_field = "jobId";
  return t;
}

// A label value for the jobId (labels are lowercase; the link itself is the stored runtime).
std::string LabelValue(const std::string& job_id) {
  std::string v = job_id.substr(0, 63);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v;
}

// The backing job's field paths in the request's terms: workerPoolSpecs[1] is the workers'
// config, its machineType the workerType.
std::string InRequestTerms(std::string text) {
  static const char* kGroups[] = {"master", "worker", "parameterServer", "evaluator"};
  for (int i = 0; i < 4; ++i) {
    const std::string pool = "workerPoolSpecs\\[" + std::to_string(i) + "\\]";
    const std::string g = kGroups[i];
    text = std::regex_replace(
        text, std::regex("(trialJobSpec|jobSpec)?\\.?" + pool + "\\.machineSpec\\.machineType"),
        "trainingInput." + g + "Type");
    text = std::regex_replace(text,
                              std::regex("(trialJobSpec|jobSpec)?\\.?" + pool + "\\.machineSpec"),
                              "trainingInput." + g + "Config.acceleratorConfig");
    text = std::regex_replace(text, std::regex("(trialJobSpec|jobSpec)?\\.?" + pool),
                              "trainingInput." + g + "Config");
  }
  // An HP-tuning job's study fields, in the hyperparameters' names.
  for (const auto& [from, to] :
       {std::pair{"studySpec\\.parameters\\[", "trainingInput.hyperparameters.params["},
        std::pair{"studySpec\\.metrics\\[0\\]", "trainingInput.hyperparameters"},
        std::pair{"\\bstudySpec\\b", "trainingInput.hyperparameters"},
        std::pair{"\\bmaxTrialCount\\b", "trainingInput.hyperparameters.maxTrials"},
        std::pair{"\\bparallelTrialCount\\b", "trainingInput.hyperparameters.maxParallelTrials"},
        std::pair{"\\bmaxFailedTrialCount\\b", "trainingInput.hyperparameters.maxFailedTrials"},
        // A group's container, in ReplicaConfig's names.
        std::pair{"Config\\.containerSpec\\.command\\b", "Config.containerCommand"},
        std::pair{"Config\\.containerSpec\\.imageUri\\b", "Config.imageUri"},
        std::pair{"Config\\.containerSpec\\.args\\b", "Config.containerArgs"},
        // The base output directory is the request's jobDir.
        std::pair{"(trialJobSpec|jobSpec)\\.baseOutputDirectory\\.outputUriPrefix",
                  "trainingInput.jobDir"},
        // A package job's fields are trainingInput's own.
        std::pair{"trainingInput\\.masterConfig\\.pythonPackageSpec\\.(packageUris|pythonModule)",
                  "trainingInput.$1"}}) {
    text = std::regex_replace(text, std::regex(from), to);
  }
  return std::regex_replace(text, std::regex("\\b(trialJobSpec|jobSpec)\\b"), "trainingInput");
}

Status InRequestTerms(const Status& s) {
  Status out(s.code(), InRequestTerms(s.message()));
  for (const FieldViolation& v : s.field_violations()) {
    out = out.WithFieldViolation(InRequestTerms(v.field), InRequestTerms(v.description));
  }
  return out;
}

// The errors the HTTP mapping answers with a 4xx: the request's fault, not the server's.
bool IsClientError(StatusCode code) {
  return code == StatusCode::kInvalidArgument || code == StatusCode::kFailedPrecondition ||
         code == StatusCode::kNotFound || code == StatusCode::kPermissionDenied ||
         code == StatusCode::kOutOfRange || code == StatusCode::kResourceExhausted;
}

bool IsTuningJob(const std::string& backing) {
  return backing.find("/" + std::string(spec::kHyperparameterTuningJobs) + "/") !=
         std::string::npos;
}

std::string ProjectOf(const std::string& parent) {  // "projects/P" -> "P"
  return parent.substr(parent.find('/') + 1);
}

void SetTime(json& j, const char* key, const std::optional<spec::Timestamp>& t) {
  if (t) {
    j[key] = FormatTimestamp(*t);
  } else {
    j.erase(key);
  }
}

}  // namespace

const store::StateVocabulary& LegacyJobStates() {
  static const store::StateVocabulary kStates{"job state", "SUCCEEDED",
                                              [](std::string_view name) -> std::optional<int64_t> {
                                                const auto s = spec::ParseLegacyJobState(name);
                                                if (!s || *s == LegacyJobState::kUnspecified)
                                                  return std::nullopt;
                                                return static_cast<int64_t>(*s);
                                              }};
  return kStates;
}

json LegacyJobView(const json& stored) {
  json view = stored;
  view.erase("name");
  view.erase("updateTime");
  // A bytes field on the wire: 16 hex digits are valid base64 (gcloud decodes it).
  char etag[17];
  std::snprintf(etag, sizeof(etag), "%016zx", std::hash<std::string>()(view.dump()));
  view["etag"] = etag;
  return view;
}

LegacyJobController::LegacyJobController(store::ResourceStore* store, JobController* jobs,
                                         TuningJobController* tuning, Clock clock)
    : store_(store),
      jobs_(jobs),
      tuning_(tuning),
      clock_(OrSystemClock(std::move(clock))),
      resources_(store, LegacyType(), clock_) {}

StatusOr<bool> LegacyJobController::BackingExists(const std::string& backing) {
  Status s = Status::Ok();
  if (IsTuningJob(backing)) {
    s = tuning_ ? tuning_->Get(backing).status() : NotFoundError(backing);
  } else {
    s = jobs_->Get(backing).status();
  }
  if (s.code() == StatusCode::kNotFound) return false;
  TY_RETURN_IF_ERROR(s);
  return true;
}

// A job whose Create stored its backing job's name but not that the job was created: the server
// stopped in between. The backing job, if it exists, is this job's (re-attached; or cancelled
// when this job was cancelled meanwhile); else it was never created.
StatusOr<bool> LegacyJobController::Reattach(const store::ResourceRecord& r) {
  const std::string planned = r.runtime.value(kPlannedBackingKey, "");
  if (planned.empty()) return false;  // a row written before the name was stored
  TY_ASSIGN_OR_RETURN(bool exists, BackingExists(planned));
  if (!exists) return false;
  if (LegacyJobEnded(r.body)) {
    (void)(IsTuningJob(planned) ? tuning_->Cancel(planned) : jobs_->Cancel(planned));
    return true;
  }
  Status s = resources_
                 .Mutate(r.name,
                         [&](json&, json& runtime) -> Status {
                           runtime["backing"] = planned;
                           return Status::Ok();
                         })
                 .status();
  if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
  return true;
}

Status LegacyJobController::Start() {
  TY_ASSIGN_OR_RETURN(auto records, store_->ListAllResources(kLegacyJobsKind));
  for (const store::ResourceRecord& r : records) {
    if (!r.runtime.value("backing", "").empty()) continue;
    TY_ASSIGN_OR_RETURN(bool reattached, Reattach(r));
    if (reattached || LegacyJobEnded(r.body)) continue;
    Status s = resources_
                   .Mutate(r.name,
                           [&](json& job, json& runtime) -> Status {
                             if (LegacyJobEnded(job) || !runtime.value("backing", "").empty()) {
                               return Status::Ok();
                             }
                             job["state"] = "FAILED";
                             job["errorMessage"] =
                                 "The server stopped before the job was started; submit it "
                                 "again (with a new job id).";
                             job["endTime"] = FormatTimestamp(clock_());
                             return Status::Ok();
                           })
                   .status();
    if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
  }
  return Status::Ok();
}

StatusOr<json> LegacyJobController::Create(const std::string& parent, const std::string& body,
                                           const std::string& job_id,
                                           const std::optional<spec::Creator>& creator) {
  TY_ASSIGN_OR_RETURN(spec::LegacyJob job, spec::ParseLegacyJobRequest(body));
  job.job_id = job_id;
  TY_RETURN_IF_ERROR(spec::ValidateLabels(job.labels, "labels"));
  TY_ASSIGN_OR_RETURN(spec::LegacyBacking backing,
                      spec::TranslateTrainingInput(job.training_input));
  if (backing.tuning && tuning_ == nullptr) {
    return InvalidFieldError("trainingInput.hyperparameters",
                             "this server runs no hyperparameter tuning; remove it");
  }
  json stored = spec::LegacyJobToJson(job);
  if (creator) spec::SetCreator(stored, *creator);
  TY_ASSIGN_OR_RETURN(json created, resources_.Insert(parent, std::move(stored), job_id));
  const std::string name = created.value("name", "");
  const std::string location =
      "projects/" + ProjectOf(parent) + "/locations/" + job.training_input.region;
  std::map<std::string, std::string> labels = {{kLegacyJobLabel, LabelValue(job_id)}};
  // scheduling.priority is the backing job's priority label (spec/job_priority.h).
  if (const auto& sched = job.training_input.scheduling; sched && sched->priority != 0) {
    labels[spec::kPriorityLabel] = std::to_string(sched->priority);
  }
  // The backing job's name is chosen and stored before the job exists, so that a server killed
  // in between finds it again (Start); the label cannot: it is lowercased and cut to 63 chars.
  const std::string backing_id = backing.tuning ? tuning_->NewId() : jobs_->NewJobId();
  const std::string planned =
      location + "/" +
      std::string(backing.tuning ? spec::kHyperparameterTuningJobs : spec::kCustomJobs) + "/" +
      backing_id;
  StatusOr<std::string> backing_name = [&]() -> StatusOr<std::string> {
    TY_RETURN_IF_ERROR(resources_
                           .Mutate(name,
                                   [&](json&, json& runtime) -> Status {
                                     runtime[kPlannedBackingKey] = planned;
                                     return Status::Ok();
                                   })
                           .status());
    if (backing.tuning) {
      spec::HyperparameterTuningJob request = std::move(*backing.tuning);
      request.display_name = job_id;
      request.labels = labels;
      request.creator = creator;
      TY_ASSIGN_OR_RETURN(auto t, tuning_->Create(location, std::move(request), backing_id));
      return t.name;
    }
    spec::CustomJob request;
    request.display_name = job_id;
    request.job_spec = std::move(backing.job_spec);
    request.labels = labels;
    if (creator) request.trainyard_info = spec::TrainyardInfo{.creator = creator};
    TY_ASSIGN_OR_RETURN(auto j, jobs_->Create(location, std::move(request), backing_id));
    return j.name;
  }();
  return Launched(name, backing_name);
}

StatusOr<json> LegacyJobController::Launched(const std::string& name,
                                             const StatusOr<std::string>& backing) {
  if (!backing.ok() && IsClientError(backing.status().code())) {
    // Refused before it ran: as if the request had been invalid, nothing stays stored.
    (void)store_->DeleteResource(kLegacyJobsKind, name);
    return InRequestTerms(backing.status());
  }
  bool cancelled_meanwhile = false;
  Status s = resources_
                 .Mutate(name,
                         [&](json& job, json& runtime) -> Status {
                           if (backing.ok()) {
                             runtime["backing"] = *backing;
                             cancelled_meanwhile = LegacyJobEnded(job);
                             return Status::Ok();
                           }
                           if (LegacyJobEnded(job)) return Status::Ok();
                           job["state"] = "FAILED";
                           job["errorMessage"] =
                               "The job could not be started: " + backing.status().message();
                           job["endTime"] = FormatTimestamp(clock_());
                           return Status::Ok();
                         })
                 .status();
  if (!s.ok()) std::fprintf(stderr, "legacy job %s: %s\n", name.c_str(), s.ToString().c_str());
  if (cancelled_meanwhile) {
    (void)(IsTuningJob(*backing) ? tuning_->Cancel(*backing) : jobs_->Cancel(*backing));
  }
  // Stored: from here the answer is the job, whatever a later read finds (never a 5xx).
  StatusOr<json> job = Get(name);
  if (job.ok()) return job;
  return LegacyJobView(json{{"jobId", name.substr(name.rfind('/') + 1)}, {"state", "QUEUED"}});
}

StatusOr<json> LegacyJobController::BackingView(const std::string& backing) {
  json v = json::object();
  if (IsTuningJob(backing)) {
    TY_ASSIGN_OR_RETURN(spec::HyperparameterTuningJob t, tuning_->Get(backing));
    v["state"] = spec::LegacyJobStateName(spec::LegacyStateOf(t.state));
    SetTime(v, "startTime", t.start_time);
    SetTime(v, "endTime", t.end_time);
    if (t.error && !t.error->message.empty() && t.state != spec::JobState::kCancelled) {
      v["errorMessage"] = t.error->message;
    }
    v["trainingOutput"] = spec::TrainingOutputToJson(spec::TrainingOutputOf(t));
    return v;
  }
  TY_ASSIGN_OR_RETURN(spec::CustomJob j, jobs_->Get(backing));
  v["state"] = spec::LegacyJobStateName(spec::LegacyStateOf(j.state));
  SetTime(v, "startTime", j.start_time);
  SetTime(v, "endTime", j.end_time);
  // A cancel is no error to report (the custom job's is google.rpc CANCELLED, "CANCELED").
  if (j.error && !j.error->message.empty() && j.state != spec::JobState::kCancelled) {
    v["errorMessage"] = j.error->message;
  }
  v["trainingOutput"] = spec::TrainingOutputToJson(spec::TrainingOutput{});
  return v;
}

StatusOr<json> LegacyJobController::Refresh(const std::string& name) {
  StatusOr<store::ResourceRecord> r = store_->GetResource(kLegacyJobsKind, name);
  if (r.status().code() == StatusCode::kNotFound) return resources_.Get(name).status();
  TY_RETURN_IF_ERROR(r.status());
  const std::string backing = r->runtime.value("backing", "");
  if (LegacyJobEnded(r->body) || backing.empty()) return r->body;
  StatusOr<json> view = BackingView(backing);
  if (view.status().code() == StatusCode::kNotFound) {
    view =
        json{{"state", "FAILED"}, {"errorMessage", "Its backing job " + backing + " was deleted."}};
  }
  TY_RETURN_IF_ERROR(view.status());
  const auto ended = spec::ParseLegacyJobState(view->value("state", ""));
  if (ended && spec::IsTerminal(*ended) && !view->contains("endTime")) {
    (*view)["endTime"] = FormatTimestamp(clock_());  // stream-logs stops on it
  }
  bool same = true;
  for (const char* key : {"state", "startTime", "endTime", "errorMessage", "trainingOutput"}) {
    same &= r->body.value(key, json()) == view->value(key, json());
  }
  if (same) return r->body;
  TY_ASSIGN_OR_RETURN(store::ResourceRecord updated,
                      resources_.Mutate(name, [&](json& job, json&) -> Status {
                        if (LegacyJobEnded(job)) return Status::Ok();  // never moves on from an end
                        for (const char* key :
                             {"state", "startTime", "endTime", "errorMessage", "trainingOutput"}) {
                          if (view->contains(key)) {
                            job[key] = (*view)[key];
                          } else {
                            job.erase(key);
                          }
                        }
                        return Status::Ok();
                      }));
  return updated.body;
}

StatusOr<json> LegacyJobController::Get(const std::string& name) {
  TY_ASSIGN_OR_RETURN(json job, Refresh(name));
  return LegacyJobView(job);
}

StatusOr<store::ResourcePage> LegacyJobController::List(const store::ListQuery& query) {
  TY_ASSIGN_OR_RETURN(auto records, store_->ListAllResources(kLegacyJobsKind));
  for (const store::ResourceRecord& r : records) {
    if (r.parent == query.parent && !LegacyJobEnded(r.body)) (void)Refresh(r.name);
  }
  TY_ASSIGN_OR_RETURN(store::ResourcePage page, resources_.List(query));
  for (auto& r : page.jobs) r.body = LegacyJobView(r.body);
  return page;
}

Status LegacyJobController::Cancel(const std::string& name) {
  TY_ASSIGN_OR_RETURN(json job, Refresh(name));
  if (LegacyJobEnded(job)) {
    return FailedPreconditionError("Job " + name + " already ended (" + job.value("state", "") +
                                   "); nothing to cancel");
  }
  TY_ASSIGN_OR_RETURN(std::string backing, BackingName(name));
  if (backing.empty()) {  // Create has not handed it over yet: it cancels the backing job
    return resources_
        .Mutate(name,
                [&](json& j, json&) -> Status {
                  if (LegacyJobEnded(j)) return Status::Ok();
                  j["state"] = "CANCELLED";
                  j["endTime"] = FormatTimestamp(clock_());
                  return Status::Ok();
                })
        .status();
  }
  Status s = IsTuningJob(backing) ? tuning_->Cancel(backing) : jobs_->Cancel(backing);
  if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) return s;
  return Refresh(name).status();
}

StatusOr<json> LegacyJobController::Patch(const std::string& name, const json& patch,
                                          const std::vector<std::string>& update_mask) {
  TY_RETURN_IF_ERROR(resources_.Patch(name, patch, update_mask).status());
  return Get(name);
}

StatusOr<std::string> LegacyJobController::BackingName(const std::string& name) {
  StatusOr<store::ResourceRecord> r = store_->GetResource(kLegacyJobsKind, name);
  if (r.status().code() == StatusCode::kNotFound) return resources_.Get(name).status();
  TY_RETURN_IF_ERROR(r.status());
  return r->runtime.value("backing", "");
}

StatusOr<std::optional<std::vector<LegacyLogStream>>> LegacyJobController::LogStreams(
    const std::string& project, const std::string& job_id) {
  using Streams = std::optional<std::vector<LegacyLogStream>>;
  StatusOr<store::ResourceRecord> r =
      store_->GetResource(kLegacyJobsKind, "projects/" + project + "/jobs/" + job_id);
  if (r.status().code() == StatusCode::kNotFound) return Streams();
  TY_RETURN_IF_ERROR(r.status());
  std::vector<LegacyLogStream> streams;
  const std::string backing = r->runtime.value("backing", "");
  if (!backing.empty() && !IsTuningJob(backing)) {
    streams.push_back({backing.substr(backing.rfind('/') + 1), ""});
  } else if (!backing.empty()) {
    StatusOr<spec::HyperparameterTuningJob> t = tuning_->Get(backing);
    if (!t.ok() && t.status().code() != StatusCode::kNotFound) return t.status();
    for (const tuning::Trial& trial : t.ok() ? t->trials : std::vector<tuning::Trial>{}) {
      if (trial.custom_job.empty()) continue;
      streams.push_back({trial.custom_job.substr(trial.custom_job.rfind('/') + 1), trial.id});
    }
  }
  return Streams(std::move(streams));
}

}  // namespace trainyard::controller
