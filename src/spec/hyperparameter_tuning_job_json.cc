#include "spec/hyperparameter_tuning_job_json.h"

#include "common/time.h"
#include "protojson/reader.h"
#include "tuning/study_spec_json.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;

// The value of `camel` or of its snake_case spelling; nullptr when absent or null.
const json* Find(const json& j, std::string_view camel, std::string_view snake) {
  for (std::string_view key : {camel, snake}) {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

Status BadValue(const std::string& path, std::string_view expected, const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return InvalidArgumentError(path + ": expected " + std::string(expected) + ", got " + s);
}

StatusOr<std::map<std::string, std::string>> ReadLabels(const json& j) {
  std::map<std::string, std::string> labels;
  const json* v = Find(j, "labels", "labels");
  if (!v) return labels;
  if (!v->is_object()) return BadValue("labels", "an object of strings", *v);
  for (const auto& [k, value] : v->items()) {
    if (!value.is_string()) return BadValue("labels." + k, "a string", value);
    labels[k] = value.get<std::string>();
  }
  return labels;
}

Status ReadTime(const json& j, std::string_view camel, std::string_view snake,
                std::optional<Timestamp>* out) {
  const json* v = Find(j, camel, snake);
  if (!v) return Status::Ok();
  if (!v->is_string()) return BadValue(std::string(camel), "an RFC 3339 timestamp", *v);
  auto t = ParseTimestamp(v->get<std::string>());
  if (!t.ok()) return InvalidArgumentError(std::string(camel) + ": " + t.status().message());
  *out = *t;
  return Status::Ok();
}

// The output-only fields of our own stored form.
Status ReadOutputOnly(const json& j, HyperparameterTuningJob* job) {
  if (const json* v = Find(j, "name", "name")) {
    if (!v->is_string()) return BadValue("name", "a string", *v);
    job->name = v->get<std::string>();
  }
  if (const json* v = Find(j, "state", "state")) {
    auto state = v->is_string() ? ParseJobState(v->get<std::string>()) : std::nullopt;
    if (!state) return BadValue("state", "a JobState name (JOB_STATE_RUNNING, ...)", *v);
    job->state = *state;
  }
  TY_RETURN_IF_ERROR(ReadTime(j, "createTime", "create_time", &job->create_time));
  TY_RETURN_IF_ERROR(ReadTime(j, "startTime", "start_time", &job->start_time));
  TY_RETURN_IF_ERROR(ReadTime(j, "endTime", "end_time", &job->end_time));
  TY_RETURN_IF_ERROR(ReadTime(j, "updateTime", "update_time", &job->update_time));
  if (const json* e = Find(j, "error", "error")) {
    if (!e->is_object()) return BadValue("error", "a google.rpc.Status object", *e);
    RpcStatus status;
    if (e->contains("code") && !(*e)["code"].is_number_integer()) {
      return BadValue("error.code", "an integer", (*e)["code"]);
    }
    if (e->contains("message") && !(*e)["message"].is_string()) {
      return BadValue("error.message", "a string", (*e)["message"]);
    }
    status.code = e->value("code", 0);
    status.message = e->value("message", "");
    job->error = status;
  }
  if (const json* t = Find(j, "trials", "trials")) {
    if (!t->is_array()) return BadValue("trials", "an array of Trials", *t);
    for (size_t i = 0; i < t->size(); ++i) {
      TY_ASSIGN_OR_RETURN(tuning::Trial trial,
                          tuning::ParseTrial((*t)[i], "trials[" + std::to_string(i) + "]"));
      job->trials.push_back(std::move(trial));
    }
  }
  if (const json* info = Find(j, "trainyardInfo", "trainyard_info")) {
    TY_ASSIGN_OR_RETURN(protojson::ObjectReader f,
                        protojson::ObjectReader::Open(*info, "trainyardInfo", {kCreatorKey}));
    TY_RETURN_IF_ERROR(f.Message(kCreatorKey, &job->creator, CreatorFromJson));
  }
  return Status::Ok();
}

}  // namespace

json HyperparameterTuningJobToJson(const HyperparameterTuningJob& job) {
  json j = tuning::ToJson(job.TuningSpec());
  if (!job.name.empty()) j["name"] = job.name;
  if (job.state != JobState::kUnspecified) j["state"] = JobStateName(job.state);
  if (job.create_time) j["createTime"] = FormatTimestamp(*job.create_time);
  if (job.start_time) j["startTime"] = FormatTimestamp(*job.start_time);
  if (job.end_time) j["endTime"] = FormatTimestamp(*job.end_time);
  if (job.update_time) j["updateTime"] = FormatTimestamp(*job.update_time);
  if (job.error) {
    json e = json::object();
    if (job.error->code != 0) e["code"] = job.error->code;
    if (!job.error->message.empty()) e["message"] = job.error->message;
    j["error"] = e;
  }
  if (!job.labels.empty()) j["labels"] = job.labels;
  if (!job.trials.empty()) {
    json trials = json::array();
    for (const auto& t : job.trials) trials.push_back(tuning::ToJson(t));
    j["trials"] = std::move(trials);
  }
  if (job.creator) j["trainyardInfo"] = {{kCreatorKey, CreatorToJson(*job.creator)}};
  return j;
}

StatusOr<HyperparameterTuningJob> HyperparameterTuningJobFromJson(const json& j, DecodeMode mode) {
  if (!j.is_object()) {
    return InvalidArgumentError(
        "the request body must be a HyperparameterTuningJob JSON object with displayName, "
        "studySpec, maxTrialCount, parallelTrialCount and trialJobSpec");
  }
  // Refuses unknown fields and ignores the output-only ones (read below for kStored).
  TY_ASSIGN_OR_RETURN(tuning::HyperparameterTuningJobSpec spec,
                      tuning::ParseHyperparameterTuningJobSpec(j));
  HyperparameterTuningJob job;
  job.display_name = std::move(spec.display_name);
  job.study_spec = std::move(spec.study_spec);
  job.max_trial_count = spec.max_trial_count;
  job.parallel_trial_count = spec.parallel_trial_count;
  job.max_failed_trial_count = spec.max_failed_trial_count;
  if (Find(j, "trialJobSpec", "trial_job_spec")) {
    TY_ASSIGN_OR_RETURN(job.trial_job_spec,
                        CustomJobSpecFromJson(spec.trial_job_spec, "trialJobSpec"));
  }
  TY_ASSIGN_OR_RETURN(job.labels, ReadLabels(j));
  if (mode == DecodeMode::kStored) TY_RETURN_IF_ERROR(ReadOutputOnly(j, &job));
  return job;
}

StatusOr<HyperparameterTuningJob> ParseHyperparameterTuningJob(std::string_view text,
                                                               DecodeMode mode) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    return InvalidArgumentError("Invalid JSON payload received: the body is not valid JSON");
  }
  return HyperparameterTuningJobFromJson(j, mode);
}

}  // namespace trainyard::spec
