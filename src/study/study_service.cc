#include "study/study_service.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "spec/custom_job_json.h"
#include "spec/custom_job_validation.h"
#include "spec/time_util.h"
#include "store/list_filter.h"
#include "tuning/study_spec_json.h"
#include "tuning/study_spec_validate.h"

namespace trainyard::study {

using nlohmann::json;
using Clock = std::chrono::system_clock;

namespace {

constexpr const char* kStudyLabel = "trainyard-hp-tuning-job";
constexpr const char* kTrialLabel = "trainyard-trial";

int64_t ToMicros(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
Clock::time_point FromMicros(int64_t us) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds(us)));
}

std::string LastSegment(const std::string& name) { return name.substr(name.rfind('/') + 1); }

bool IsRunningTrial(const tuning::Trial& t) {
  return t.state == tuning::TrialState::kActive || t.state == tuning::TrialState::kStopping ||
         t.state == tuning::TrialState::kRequested;
}

// The file may be mid-rewrite; the collector tolerates a cut last line.
std::optional<std::string> ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

StatusOr<std::map<std::string, std::string>> ParseLabels(const json& body) {
  std::map<std::string, std::string> labels;
  if (!body.contains("labels") || body["labels"].is_null()) return labels;
  if (!body["labels"].is_object())
    return InvalidArgumentError("labels: expected an object of strings");
  for (const auto& [k, v] : body["labels"].items()) {
    if (!v.is_string()) return InvalidArgumentError("labels." + k + ": expected a string");
    labels[k] = v.get<std::string>();
  }
  TY_RETURN_IF_ERROR(spec::ValidateLabels(labels, "labels"));
  return labels;
}

}  // namespace

struct StudyService::Study {
  std::string name;
  std::string parent;
  std::string id;
  std::map<std::string, std::string> labels;
  Clock::time_point create_time;
  std::optional<Clock::time_point> end_time;
  Clock::time_point update_time;
  std::unique_ptr<Launcher> launcher;
  std::unique_ptr<tuning::StudyRunner> runner;
  std::string restore_error;  // set when the stored state could not be restored (FAILED)
  std::map<std::string, TrialWatch> watches;                 // by trial id
  std::vector<std::pair<std::string, std::string>> created;  // (trial id, job name) to record
  spec::CustomJobSpec trial_job_spec;
  json request;  // the normalised request (spec + labels), shown even if restore failed
};

// Turns the runner's StartTrial/StopTrial into JobController calls. It never calls back into the
// runner (StudyRunner's rule): created jobs are queued in Study::created.
class StudyService::Launcher : public tuning::TrialLauncher {
 public:
  Launcher(StudyService* service, Study* study) : service_(service), study_(study) {}

  Status StartTrial(const tuning::Trial& trial, const tuning::TrialLaunch& launch) override {
    spec::CustomJob job;
    std::string display = study_->runner->spec().display_name + " trial " + trial.id;
    job.display_name = display.substr(0, spec::kMaxDisplayNameChars);
    job.labels = {{kStudyLabel, study_->id}, {kTrialLabel, trial.id}};
    job.job_spec = study_->trial_job_spec;
    for (auto& pool : job.job_spec.worker_pool_specs) {
      std::vector<std::string>* args = nullptr;
      std::vector<spec::EnvVar>* env = nullptr;
      if (pool.container_spec) {
        args = &pool.container_spec->args;
        env = &pool.container_spec->env;
      } else if (pool.python_package_spec) {
        args = &pool.python_package_spec->args;
        env = &pool.python_package_spec->env;
      } else {
        continue;
      }
      args->insert(args->end(), launch.args.begin(), launch.args.end());
      for (const auto& [k, v] : launch.env) {
        std::erase_if(*env, [&](const spec::EnvVar& e) { return e.name == k; });
        env->push_back({k, v});
      }
    }
    std::string& base = job.job_spec.base_output_directory;
    if (!base.empty()) {
      if (!base.ends_with('/')) base += '/';
      base += trial.id + "/";
    }
    TY_ASSIGN_OR_RETURN(spec::CustomJob created,
                        service_->controller_->Create(study_->parent, std::move(job)));
    TrialWatch watch;
    watch.job_name = created.name;
    double start =
        std::chrono::duration<double>(service_->options_.clock().time_since_epoch()).count();
    watch.collector = service_->NewCollector(*study_, start);
    study_->watches[trial.id] = std::move(watch);
    study_->created.emplace_back(trial.id, created.name);
    return Status::Ok();
  }

  void StopTrial(const std::string& trial_id) override {
    auto it = study_->watches.find(trial_id);
    if (it == study_->watches.end()) return;
    Status s = service_->controller_->Cancel(it->second.job_name);
    if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) {
      std::cerr << "trainyard: cannot stop trial " << trial_id << " of " << study_->name << ": "
                << s.ToString() << "\n";
    }
  }

 private:
  StudyService* service_;
  Study* study_;
};

StudyService::StudyService(StudyStore* store, controller::JobController* controller,
                           StudyServiceOptions options)
    : store_(store), controller_(controller), options_(std::move(options)) {
  if (!options_.clock) options_.clock = [] { return Clock::now(); };
}

StudyService::~StudyService() { Stop(); }

std::string StudyService::NewId() {
  // Numeric and increasing with time, like the controller's job ids.
  uint64_t now_us = static_cast<uint64_t>(ToMicros(options_.clock()));
  last_id_ = std::max(last_id_ + 1, now_us * 1000);
  return std::to_string(last_id_);
}

tuning::StudyRunnerOptions StudyService::RunnerOptions(const std::string& id) const {
  tuning::StudyRunnerOptions o;
  o.seed = options_.seed ? *options_.seed : std::hash<std::string>{}(id);
  o.clock = options_.clock;
  return o;
}

std::unique_ptr<tuning::MetricCollector> StudyService::NewCollector(
    const Study& s, std::optional<double> start) const {
  std::vector<std::string> ids;
  for (const auto& m : s.runner->spec().study_spec.metrics) ids.push_back(m.metric_id);
  return std::make_unique<tuning::MetricCollector>(ids, start);
}

StatusOr<json> StudyService::Create(const std::string& parent, const json& body) {
  if (!body.is_object()) {
    return InvalidArgumentError(
        "the request body must be a HyperparameterTuningJob JSON object with displayName, "
        "studySpec, maxTrialCount, parallelTrialCount and trialJobSpec");
  }
  TY_ASSIGN_OR_RETURN(tuning::HyperparameterTuningJobSpec spec,
                      tuning::ParseHyperparameterTuningJobSpec(body));
  TY_RETURN_IF_ERROR(tuning::ValidateHyperparameterTuningJobSpec(spec));
  if (!body.contains("trialJobSpec") && !body.contains("trial_job_spec")) {
    return InvalidArgumentError(
        "trialJobSpec: required; give the CustomJobSpec each trial runs, e.g. "
        "{\"workerPoolSpecs\": [{\"machineSpec\": {\"machineType\": \"n1-standard-4\"}, "
        "\"replicaCount\": 1, \"containerSpec\": {\"imageUri\": \"...\"}}]}");
  }
  TY_ASSIGN_OR_RETURN(spec::CustomJobSpec trial_spec,
                      spec::CustomJobSpecFromJson(spec.trial_job_spec, "trialJobSpec"));
  TY_RETURN_IF_ERROR(spec::ValidateCustomJobSpec(trial_spec, "trialJobSpec"));
  spec.trial_job_spec = spec::CustomJobSpecToJson(trial_spec);
  TY_ASSIGN_OR_RETURN(auto labels, ParseLabels(body));

  std::lock_guard lock(mu_);
  auto s = std::make_unique<Study>();
  s->id = NewId();
  s->parent = parent;
  s->name = parent + "/hyperparameterTuningJobs/" + s->id;
  s->labels = std::move(labels);
  s->create_time = s->update_time = options_.clock();
  s->trial_job_spec = std::move(trial_spec);
  s->launcher = std::make_unique<Launcher>(this, s.get());
  s->request = tuning::ToJson(spec);
  TY_ASSIGN_OR_RETURN(s->runner, tuning::StudyRunner::Create(std::move(spec), s->launcher.get(),
                                                             RunnerOptions(s->id)));
  // The acknowledgement point: once stored, a crash before the first trial starts is resumed.
  TY_RETURN_IF_ERROR(Persist(*s, /*insert=*/true));
  Study& study = *s;
  studies_[s->name] = std::move(s);
  Status pumped = study.runner->Pump();
  if (!pumped.ok()) {
    std::cerr << "trainyard: " << study.name << ": " << pumped.ToString() << "\n";
  }
  AfterRunnerCall(study);
  (void)Persist(study);
  return ToResource(study);
}

StatusOr<json> StudyService::Get(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = studies_.find(name);
  if (it == studies_.end()) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  return ToResource(*it->second);
}

StatusOr<StudyListPage> StudyService::List(const std::string& parent, int page_size,
                                           const std::string& page_token,
                                           const std::string& filter) {
  TY_ASSIGN_OR_RETURN(store::ListFilter parsed, store::ListFilter::Parse(filter));
  if (page_size <= 0) page_size = 100;
  size_t offset = 0;
  if (!page_token.empty()) {
    try {
      size_t used = 0;
      offset = std::stoul(page_token, &used);
      if (used != page_token.size()) throw std::invalid_argument("trailing");
    } catch (...) {
      return InvalidArgumentError("pageToken: '" + page_token +
                                  "' is not a token from a previous list response");
    }
  }
  std::lock_guard lock(mu_);
  std::vector<const Study*> matching;
  for (const auto& [name, s] : studies_) {
    if (s->parent != parent) continue;
    std::string display_name =
        s->runner ? s->runner->spec().display_name : s->request.value("displayName", std::string());
    store::FilterSubject subject{
        spec::ParseJobState(DisplayState(*s)).value_or(spec::JobState::kUnspecified), display_name,
        s->create_time, s->update_time, &s->labels};
    if (parsed.Matches(subject)) matching.push_back(s.get());
  }
  std::sort(matching.begin(), matching.end(), [](const Study* a, const Study* b) {
    return a->create_time != b->create_time ? a->create_time > b->create_time : a->id > b->id;
  });
  StudyListPage page;
  for (size_t i = offset; i < matching.size() && page.jobs.size() < static_cast<size_t>(page_size);
       ++i) {
    page.jobs.push_back(ToResource(*matching[i]));
  }
  if (offset + page.jobs.size() < matching.size()) {
    page.next_page_token = std::to_string(offset + page.jobs.size());
  }
  return page;
}

Status StudyService::Cancel(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = studies_.find(name);
  if (it == studies_.end()) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  Study& s = *it->second;
  if (!s.runner || s.runner->state() != tuning::StudyState::kRunning) {
    return FailedPreconditionError("hyperparameterTuningJob " + name + " already ended (" +
                                   DisplayState(s) + "); nothing to cancel");
  }
  TY_RETURN_IF_ERROR(s.runner->Cancel());
  AfterRunnerCall(s);
  s.update_time = options_.clock();
  return Persist(s);
}

StatusOr<json> StudyService::Delete(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = studies_.find(name);
  if (it == studies_.end()) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  Study& s = *it->second;
  std::string state = DisplayState(s);
  if (state != "JOB_STATE_SUCCEEDED" && state != "JOB_STATE_FAILED" &&
      state != "JOB_STATE_CANCELLED") {
    return FailedPreconditionError("hyperparameterTuningJob " + name + " is " + state +
                                   "; cancel it and wait until it is CANCELLED before deleting");
  }
  if (s.runner) {
    for (const auto& t : s.runner->trials()) {
      if (IsRunningTrial(t)) {
        return FailedPreconditionError("hyperparameterTuningJob " + name + ": trial " + t.id +
                                       " is still stopping; retry in a few seconds");
      }
    }
  }
  json resource = ToResource(s);
  for (const auto& [trial_id, watch] : s.watches) {
    auto deleted = controller_->Delete(watch.job_name);
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound) {
      return Status(deleted.status().code(),
                    "cannot delete trial " + trial_id + "'s job: " + deleted.status().message());
    }
  }
  TY_RETURN_IF_ERROR(store_->Delete(name));
  studies_.erase(it);
  return resource;
}

void StudyService::AfterRunnerCall(Study& s) {
  for (const auto& [trial_id, job_name] : s.created) {
    (void)s.runner->SetCustomJob(trial_id, job_name);
  }
  s.created.clear();
  if (!s.end_time) {
    std::string state = DisplayState(s);
    if (state == "JOB_STATE_SUCCEEDED" || state == "JOB_STATE_FAILED" ||
        state == "JOB_STATE_CANCELLED") {
      s.end_time = options_.clock();
    }
  }
}

bool StudyService::PollTrial(Study& s, const std::string& trial_id) {
  auto it = s.watches.find(trial_id);
  if (it == s.watches.end()) {
    // ACTIVE in the runner without a job: cannot happen after a clean start; end it clearly.
    (void)s.runner->OnTrialEnded(trial_id, {false, "the trial's job is unknown to the server"});
    return true;
  }
  TrialWatch& w = it->second;
  StatusOr<spec::CustomJob> job = controller_->Get(w.job_name);
  if (!job.ok()) {
    if (job.status().code() != StatusCode::kNotFound) return false;  // transient; next pass
    (void)s.runner->OnTrialEnded(
        trial_id, {false, "the trial's job " + w.job_name + " was deleted while it ran"});
    return true;
  }
  // Read what the job wrote before looking at its end, so the last report is not lost.
  bool terminal = spec::IsTerminal(job->state);
  size_t before = w.collector->measurements().size();
  bool added = false;
  if (options_.metric_file) {
    if (auto content = ReadWholeFile(options_.metric_file(*job))) {
      added |= !w.collector->ObserveHypertuneFile(*content).empty();
    }
  }
  while (true) {
    StatusOr<controller::LogPage> page = controller_->ReadLogs(w.job_name, w.log_cursor, 1000);
    if (!page.ok() || page->lines.empty()) break;
    for (const auto& line : page->lines) {
      if (line.pool_index != 0 || line.replica_index != 0 || line.is_stderr) continue;
      added |= w.collector->ObserveStdoutLine(line.text).has_value();
    }
    w.log_cursor = page->next_cursor;
  }
  bool changed = added || w.collector->measurements().size() != before;
  if (changed) {
    (void)s.runner->UpdateMeasurements(trial_id, w.collector->measurements());
  }
  if (terminal) {
    tuning::TrialOutcome outcome;
    outcome.succeeded = job->state == spec::JobState::kSucceeded;
    if (!outcome.succeeded) {
      outcome.error =
          job->error ? job->error->message : std::string(spec::JobStateName(job->state));
    }
    (void)s.runner->OnTrialEnded(trial_id, outcome);
    changed = true;
  }
  return changed;
}

void StudyService::PollStudy(Study& s) {
  if (!s.runner) return;
  bool changed = false;
  std::vector<std::string> running;
  for (const auto& t : s.runner->trials()) {
    if (IsRunningTrial(t)) running.push_back(t.id);
  }
  for (const auto& id : running) {
    changed |= PollTrial(s, id);
    AfterRunnerCall(s);
  }
  if (s.runner->state() == tuning::StudyState::kRunning) {
    size_t before = s.runner->trials().size();
    Status pumped = s.runner->Pump();
    if (!pumped.ok()) std::cerr << "trainyard: " << s.name << ": " << pumped.ToString() << "\n";
    changed |= s.runner->trials().size() != before;
  }
  AfterRunnerCall(s);
  if (changed) {
    s.update_time = options_.clock();
    (void)Persist(s);
  }
}

void StudyService::PollOnce() {
  std::lock_guard lock(mu_);
  for (auto& [name, s] : studies_) PollStudy(*s);
}

std::string StudyService::DisplayState(const Study& s) const {
  if (!s.runner) return "JOB_STATE_FAILED";
  switch (s.runner->state()) {
    case tuning::StudyState::kRunning:
      return s.runner->trials().empty() ? "JOB_STATE_PENDING" : "JOB_STATE_RUNNING";
    case tuning::StudyState::kSucceeded:
      return "JOB_STATE_SUCCEEDED";
    case tuning::StudyState::kFailed:
      return "JOB_STATE_FAILED";
    case tuning::StudyState::kCancelled:
      for (const auto& t : s.runner->trials()) {
        if (IsRunningTrial(t)) return "JOB_STATE_CANCELLING";
      }
      return "JOB_STATE_CANCELLED";
  }
  return "JOB_STATE_UNSPECIFIED";
}

json StudyService::ToResource(const Study& s) const {
  json j = s.runner ? tuning::ToJson(s.runner->spec()) : s.request;
  j["name"] = s.name;
  j["state"] = DisplayState(s);
  j["createTime"] = spec::FormatTimestamp(s.create_time);
  j["updateTime"] = spec::FormatTimestamp(s.update_time);
  if (!s.labels.empty()) j["labels"] = s.labels;
  if (s.runner) {
    json trials = json::array();
    std::optional<Clock::time_point> start;
    for (const auto& t : s.runner->trials()) {
      trials.push_back(tuning::ToJson(t));
      if (t.start_time && (!start || *t.start_time < *start)) start = t.start_time;
    }
    if (!trials.empty()) j["trials"] = std::move(trials);
    if (start) j["startTime"] = spec::FormatTimestamp(*start);
  }
  if (s.end_time) j["endTime"] = spec::FormatTimestamp(*s.end_time);
  if (!s.runner) {
    j["error"] = {{"code", static_cast<int>(StatusCode::kDataLoss)}, {"message", s.restore_error}};
  } else if (s.runner->state() == tuning::StudyState::kFailed) {
    j["error"] = {{"code", static_cast<int>(StatusCode::kFailedPrecondition)},
                  {"message", s.runner->error()}};
  } else if (s.runner->state() == tuning::StudyState::kCancelled) {
    j["error"] = {{"code", static_cast<int>(StatusCode::kCancelled)}, {"message", "CANCELED"}};
  }
  return j;
}

json StudyService::ToRecordData(const Study& s) const {
  json d;
  d["request"] = s.request;
  if (!s.labels.empty()) d["labels"] = s.labels;
  d["updateUs"] = ToMicros(s.update_time);
  if (s.end_time) d["endUs"] = ToMicros(*s.end_time);
  if (s.runner) d["runner"] = s.runner->SaveState();
  if (!s.restore_error.empty()) d["restoreError"] = s.restore_error;
  json watches = json::object();
  for (const auto& [id, w] : s.watches) {
    watches[id] = {
        {"job", w.job_name}, {"logCursor", w.log_cursor}, {"collector", w.collector->SaveState()}};
  }
  d["trials"] = std::move(watches);
  return d;
}

Status StudyService::Persist(Study& s, bool insert) {
  StudyRecord r;
  r.name = s.name;
  r.parent = s.parent;
  r.create_us = ToMicros(s.create_time);
  r.data = ToRecordData(s);
  Status st = insert ? store_->Insert(r) : store_->Update(r);
  if (!st.ok()) {
    std::cerr << "trainyard: cannot save hyperparameterTuningJob " << s.name << ": "
              << st.ToString() << "\n";
  }
  return st;
}

Status StudyService::RestoreStudy(const StudyRecord& record) {
  auto s = std::make_unique<Study>();
  s->name = record.name;
  s->parent = record.parent;
  s->id = LastSegment(record.name);
  s->create_time = FromMicros(record.create_us);
  const json& d = record.data;
  s->request = d.value("request", json::object());
  s->update_time = FromMicros(d.value("updateUs", record.create_us));
  if (d.contains("endUs")) s->end_time = FromMicros(d["endUs"].get<int64_t>());
  if (d.contains("labels")) s->labels = d["labels"].get<std::map<std::string, std::string>>();
  s->launcher = std::make_unique<Launcher>(this, s.get());
  s->restore_error = d.value("restoreError", "");
  auto fail = [&](const std::string& why) {
    s->runner.reset();
    s->restore_error = "the stored state of this study could not be restored: " + why;
    if (!s->end_time) s->end_time = options_.clock();
  };
  auto trial_spec =
      spec::CustomJobSpecFromJson(s->request.value("trialJobSpec", json::object()), "trialJobSpec");
  if (!trial_spec.ok()) {
    fail(trial_spec.status().message());
  } else if (d.contains("runner") && s->restore_error.empty()) {
    s->trial_job_spec = *trial_spec;
    auto runner =
        tuning::StudyRunner::Restore(d["runner"], s->launcher.get(), RunnerOptions(s->id));
    if (!runner.ok()) {
      fail(runner.status().message());
    } else {
      s->runner = std::move(*runner);
      const json trials = d.value("trials", json::object());
      for (const auto& [id, w] : trials.items()) {
        TrialWatch watch;
        watch.job_name = w.value("job", "");
        watch.log_cursor = w.value("logCursor", int64_t{-1});
        watch.collector = NewCollector(*s, std::nullopt);
        if (Status st = watch.collector->RestoreState(w.value("collector", json::object()));
            !st.ok()) {
          std::cerr << "trainyard: " << s->name << " trial " << id
                    << ": metrics state lost: " << st.ToString() << "\n";
        }
        s->watches[id] = std::move(watch);
      }
      CancelOrphans(*s);
    }
  } else if (s->restore_error.empty()) {
    fail("the record has no runner state");
  }
  Study& study = *s;
  studies_[s->name] = std::move(s);
  if (!study.runner && !d.contains("restoreError")) return Persist(study);
  return Status::Ok();
}

// A trial job created just before a crash, whose trial the stored state does not know, would run
// unobserved and its trial id would be reused: cancel it.
void StudyService::CancelOrphans(Study& s) {
  store::ListQuery q;
  q.parent = s.parent;
  q.filter = std::string("labels.") + kStudyLabel + "=\"" + s.id + "\"";
  std::string token;
  do {
    q.page_token = token;
    auto page = controller_->List(q);
    if (!page.ok()) return;
    for (const auto& job : page->jobs) {
      bool known = false;
      for (const auto& [id, w] : s.watches) known |= w.job_name == job.name;
      if (!known && !spec::IsTerminal(job.state)) {
        std::cerr << "trainyard: " << s.name << ": cancelling orphan trial job " << job.name
                  << "\n";
        (void)controller_->Cancel(job.name);
      }
    }
    token = page->next_page_token;
  } while (!token.empty());
}

Status StudyService::Start() {
  TY_ASSIGN_OR_RETURN(std::vector<StudyRecord> records, store_->List(""));
  {
    std::lock_guard lock(mu_);
    for (const auto& r : records) {
      uint64_t id = 0;
      try {
        id = std::stoull(LastSegment(r.name));
      } catch (...) {
      }
      last_id_ = std::max(last_id_, id);
      try {
        TY_RETURN_IF_ERROR(RestoreStudy(r));
      } catch (const std::exception& e) {
        // A malformed record must not keep the server from starting; the study shows FAILED.
        StudyRecord broken = r;
        broken.data["restoreError"] =
            std::string("the stored state of this study could not be restored: ") + e.what();
        broken.data.erase("runner");
        TY_RETURN_IF_ERROR(RestoreStudy(broken));
      }
    }
  }
  if (options_.poll_interval.count() > 0) {
    std::lock_guard lock(thread_mu_);
    stopping_ = false;
    thread_ = std::thread([this] { Loop(); });
  }
  return Status::Ok();
}

void StudyService::Loop() {
  std::unique_lock lock(thread_mu_);
  while (!stopping_) {
    lock.unlock();
    PollOnce();
    lock.lock();
    wake_.wait_for(lock, options_.poll_interval, [this] { return stopping_; });
  }
}

void StudyService::Stop() {
  {
    std::lock_guard lock(thread_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace trainyard::study
