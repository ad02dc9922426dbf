#include "controller/tuning_job_controller.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "common/beneath.h"
#include "common/time.h"
#include "spec/custom_job_validation.h"
#include "spec/hyperparameter_tuning_job_validation.h"
#include "spec/job_priority.h"
#include "spec/resource_name.h"

namespace trainyard::controller {

using nlohmann::json;
using spec::JobState;
using SystemClock = std::chrono::system_clock;

namespace {

constexpr const char* kStudyLabel = "trainyard-hp-tuning-job";
constexpr const char* kTrialLabel = "trainyard-trial";

bool IsRunningTrial(const tuning::Trial& t) {
  return t.state == tuning::TrialState::kActive || t.state == tuning::TrialState::kStopping ||
         t.state == tuning::TrialState::kRequested;
}

// The file may be mid-rewrite; the collector tolerates a cut last line. The replica owns its work
// dir (whose entry in the job dir is the server's) and what is in it: the file is read beneath
// the work dir without following a link, only as a regular file (a FIFO there cannot block the
// controller), and at most 64 MiB of it.
std::optional<std::string> ReadWholeFile(const std::filesystem::path& path) {
  constexpr size_t kMaxMetricFileBytes = 64 << 20;
  auto dir = BeneathDir::Open(path.parent_path().parent_path());
  if (!dir.ok()) return std::nullopt;
  auto text = dir->ReadFile((path.parent_path().filename() / path.filename()).string(),
                            kMaxMetricFileBytes);
  if (!text.ok()) return std::nullopt;
  return std::move(text).value();
}

// Appends the trial's args and env to every pool of `job`, and a <trial id>/ level to its base
// output directory.
void ApplyTrialLaunch(const std::string& trial_id, const tuning::TrialLaunch& launch,
                      spec::CustomJobSpec& job_spec) {
  for (auto& pool : job_spec.worker_pool_specs) {
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
  std::string& base = job_spec.base_output_directory;
  if (!base.empty()) {
    if (!base.ends_with('/')) base += '/';
    base += trial_id + "/";
  }
}

}  // namespace

struct TuningJobController::Study {
  // Held for every runner call and for everything below up to the view fields.
  std::mutex run_mu;
  // Orders the store writes of the runner's owner and of a Cancel that found the runner busy, so
  // the last write always carries a recorded cancel. Taken after run_mu, before the controller's.
  std::mutex persist_mu;

  // The resource. Input fields come from the create request; Refresh() derives the output ones.
  spec::HyperparameterTuningJob job;
  std::string parent;
  std::unique_ptr<Launcher> launcher;
  std::unique_ptr<tuning::StudyRunner> runner;  // null when the stored state was unusable
  std::string restore_error;                    // why runner is null (the job is FAILED)
  std::map<std::string, TrialWatch> watches;    // by trial id
  std::vector<std::pair<std::string, std::string>> created;  // (trial id, job name) to record
  bool dirty = false;  // a change to store that no runner event reported (an applied cancel)

  // Under the controller's mu_:
  spec::HyperparameterTuningJob view;  // what Get answers: `job` after the last runner call
  bool cancel_requested = false;       // by a Cancel that found run_mu held; stored, never reset
  json stored_runtime;                 // the runtime state last written (RequestCancel rewrites it)
  bool deleted = false;
};

// Turns the runner's StartTrial/StopTrial into JobController calls. It never calls back into the
// runner (StudyRunner's rule): created jobs are queued in Study::created.
class TuningJobController::Launcher : public tuning::TrialLauncher {
 public:
  Launcher(TuningJobController* owner, Study* study) : owner_(owner), study_(study) {}

  Status StartTrial(const tuning::Trial& trial, const tuning::TrialLaunch& launch) override {
    spec::CustomJob job;
    std::string display = study_->job.display_name + " trial " + trial.id;
    job.display_name = display.substr(0, spec::kMaxDisplayNameChars);
    job.labels = {{kStudyLabel, study_->job.Id()}, {kTrialLabel, trial.id}};
    // Trials queue with their tuning job's priority (spec/job_priority.h).
    if (auto p = study_->job.labels.find(spec::kPriorityLabel); p != study_->job.labels.end()) {
      job.labels.insert(*p);
    }
    job.job_spec = study_->job.trial_job_spec;
    ApplyTrialLaunch(trial.id, launch, job.job_spec);
    if (study_->job.creator) {
      job.trainyard_info = spec::TrainyardInfo{};
      job.trainyard_info->creator = study_->job.creator;
    }
    TY_ASSIGN_OR_RETURN(spec::CustomJob created,
                        owner_->jobs_->Create(study_->parent, std::move(job)));
    TrialWatch watch;
    watch.job_name = created.name;
    double start =
        std::chrono::duration<double>(owner_->options_.clock().time_since_epoch()).count();
    watch.collector = owner_->NewCollector(*study_, start);
    study_->watches[trial.id] = std::move(watch);
    study_->created.emplace_back(trial.id, created.name);
    return Status::Ok();
  }

  void StopTrial(const std::string& trial_id) override {
    auto it = study_->watches.find(trial_id);
    if (it == study_->watches.end()) return;
    Status s = owner_->jobs_->Cancel(it->second.job_name);
    if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) {
      std::cerr << "trainyard: cannot stop trial " << trial_id << " of " << study_->job.name << ": "
                << s.ToString() << "\n";
    }
  }

 private:
  TuningJobController* owner_;
  Study* study_;
};

TuningJobController::TuningJobController(store::TuningJobStore* store, JobController* jobs,
                                         TuningJobControllerOptions options)
    : store_(store), jobs_(jobs), options_(std::move(options)) {
  options_.clock = OrSystemClock(std::move(options_.clock));
}

TuningJobController::~TuningJobController() { Stop(); }

std::string TuningJobController::NewId() {
  // Numeric and increasing with time, like the JobController's job ids.
  uint64_t now_us = static_cast<uint64_t>(ToUnixMicros(options_.clock()));
  std::lock_guard lock(mu_);
  last_id_ = std::max(last_id_ + 1, now_us * 1000);
  return std::to_string(last_id_);
}

std::shared_ptr<TuningJobController::Study> TuningJobController::Find(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = studies_.find(name);
  return it == studies_.end() ? nullptr : it->second;
}

tuning::StudyRunnerOptions TuningJobController::RunnerOptions(const std::string& id) const {
  tuning::StudyRunnerOptions o;
  o.seed = options_.seed ? *options_.seed : std::hash<std::string>{}(id);
  o.clock = options_.clock;
  o.make_searcher = options_.make_searcher;
  return o;
}

std::unique_ptr<tuning::MetricCollector> TuningJobController::NewCollector(
    const Study& s, std::optional<double> start) const {
  std::vector<std::string> ids;
  for (const auto& m : s.job.study_spec.metrics) ids.push_back(m.metric_id);
  return std::make_unique<tuning::MetricCollector>(ids, start);
}

// The custom-job checks (image catalog, executor, replica user) the trials' jobs will meet, so
// that a study whose every trial would fail at start is a 400 instead.
Status TuningJobController::ValidateTrialJob(const std::string& parent,
                                             const spec::HyperparameterTuningJob& job) {
  spec::CustomJob trial;
  trial.display_name = "trial";
  trial.labels = {{kStudyLabel, "0"}, {kTrialLabel, "1"}};
  trial.job_spec = job.trial_job_spec;
  ApplyTrialLaunch("1", tuning::TrialLaunch{}, trial.job_spec);
  Status v = jobs_->Validate(parent, std::move(trial));
  if (v.ok()) return v;
  static const std::regex kJobSpec("\\bjobSpec\\b");
  Status out(v.code(), std::regex_replace(v.message(), kJobSpec, "trialJobSpec"));
  for (const FieldViolation& f : v.field_violations()) {
    out = out.WithFieldViolation(std::regex_replace(f.field, kJobSpec, "trialJobSpec"),
                                 f.description);
  }
  return out;
}

StatusOr<spec::HyperparameterTuningJob> TuningJobController::Create(
    const std::string& parent, spec::HyperparameterTuningJob request, const std::string& id) {
  TY_RETURN_IF_ERROR(spec::ValidateHyperparameterTuningJob(request));
  TY_RETURN_IF_ERROR(ValidateTrialJob(parent, request));
  auto s = std::make_shared<Study>();
  std::lock_guard run(s->run_mu);  // before it is visible: PollOnce skips it until Create ends
  s->parent = parent;
  s->job = std::move(request);
  s->job.name = parent + "/" + std::string(spec::kHyperparameterTuningJobs) + "/" +
                (id.empty() ? NewId() : id);
  s->job.create_time = s->job.update_time = options_.clock();
  s->job.start_time.reset();
  s->job.end_time.reset();
  s->job.error.reset();
  s->job.trials.clear();
  s->launcher = std::make_unique<Launcher>(this, s.get());
  TY_ASSIGN_OR_RETURN(s->runner, tuning::StudyRunner::Create(s->job.TuningSpec(), s->launcher.get(),
                                                             RunnerOptions(s->job.Id())));
  if (Find(s->job.name)) return AlreadyExistsError(s->job.name + " already exists");
  // The acknowledgement point: once stored, a crash before the first trial starts is resumed.
  TY_RETURN_IF_ERROR(Persist(*s, /*insert=*/true));
  {
    std::lock_guard lock(mu_);
    studies_[s->job.name] = s;
  }
  Status pumped = s->runner->Pump();
  if (!pumped.ok()) {
    std::cerr << "trainyard: " << s->job.name << ": " << pumped.ToString() << "\n";
  }
  AfterRunnerCall(*s);
  (void)Persist(*s);
  return s->job;
}

StatusOr<spec::HyperparameterTuningJob> TuningJobController::Get(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = studies_.find(name);
  if (it == studies_.end()) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  return it->second->view;
}

StatusOr<store::TuningJobListResult> TuningJobController::List(const store::ListQuery& query) {
  return store_->ListTuningJobs(query);
}

Status TuningJobController::Cancel(const std::string& name) {
  std::shared_ptr<Study> found = Find(name);
  if (!found) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  Study& s = *found;
  std::unique_lock run(s.run_mu, std::try_to_lock);
  if (!run.owns_lock()) return RequestCancel(s);
  if (!s.runner || s.runner->state() != tuning::StudyState::kRunning) {
    Refresh(s);
    return FailedPreconditionError("hyperparameterTuningJob " + name + " already ended (" +
                                   std::string(spec::JobStateName(s.job.state)) +
                                   "); nothing to cancel");
  }
  TY_RETURN_IF_ERROR(s.runner->Cancel());
  AfterRunnerCall(s);
  s.job.update_time = options_.clock();
  return Persist(s);
}

// The runner is busy (maybe for long: a slow searcher). The request is stored with the job's last
// stored state, so it is applied after a restart too; the runner's owner applies it when its call
// returns (AfterRunnerCall), and every later store write of the owner keeps it (Persist).
Status TuningJobController::RequestCancel(Study& s) {
  std::lock_guard persist(s.persist_mu);
  store::TuningJobRecord r;
  {
    std::lock_guard lock(mu_);
    if (spec::IsTerminal(s.view.state)) {
      return FailedPreconditionError("hyperparameterTuningJob " + s.view.name + " already ended (" +
                                     std::string(spec::JobStateName(s.view.state)) +
                                     "); nothing to cancel");
    }
    s.cancel_requested = true;
    s.view.state = JobState::kCancelling;
    s.view.update_time = options_.clock();
    s.stored_runtime["cancelRequested"] = true;
    r = {s.view, s.stored_runtime};
  }
  return store_->UpdateTuningJob(r);
}

StatusOr<spec::HyperparameterTuningJob> TuningJobController::Delete(const std::string& name) {
  std::shared_ptr<Study> found = Find(name);
  if (!found) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  Study& s = *found;
  {
    std::lock_guard lock(mu_);
    if (!spec::IsTerminal(s.view.state)) {
      return FailedPreconditionError("hyperparameterTuningJob " + name + " is " +
                                     std::string(spec::JobStateName(s.view.state)) +
                                     "; cancel it and wait until it is CANCELLED before deleting");
    }
  }
  std::lock_guard run(s.run_mu);  // an ended study's runner calls are short
  if (s.runner) {
    for (const auto& t : s.runner->trials()) {
      if (IsRunningTrial(t)) {
        return FailedPreconditionError("hyperparameterTuningJob " + name + ": trial " + t.id +
                                       " is still stopping; retry in a few seconds");
      }
    }
  }
  for (const auto& [trial_id, watch] : s.watches) {
    auto deleted = jobs_->Delete(watch.job_name);
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound) {
      return Status(deleted.status().code(),
                    "cannot delete trial " + trial_id + "'s job: " + deleted.status().message());
    }
  }
  TY_RETURN_IF_ERROR(store_->DeleteTuningJob(name));
  std::lock_guard lock(mu_);
  s.deleted = true;
  studies_.erase(name);
  return s.view;
}

void TuningJobController::AfterRunnerCall(Study& s) {
  bool cancel = false;
  {
    std::lock_guard lock(mu_);
    cancel = s.cancel_requested;
  }
  if (cancel && s.runner && s.runner->state() == tuning::StudyState::kRunning) {
    (void)s.runner->Cancel();
    s.job.update_time = options_.clock();
    s.dirty = true;
  }
  for (const auto& [trial_id, job_name] : s.created) {
    (void)s.runner->SetCustomJob(trial_id, job_name);
  }
  s.created.clear();
  Refresh(s);
  if (!s.job.end_time && spec::IsTerminal(s.job.state)) s.job.end_time = options_.clock();
  Publish(s);
}

void TuningJobController::Publish(Study& s) {
  std::lock_guard lock(mu_);
  s.view = s.job;
  // A cancel recorded after AfterRunnerCall looked: the next runner call applies it.
  if (s.cancel_requested && !spec::IsTerminal(s.view.state)) s.view.state = JobState::kCancelling;
}

bool TuningJobController::ReadTrialOutput(TrialWatch& w, const spec::CustomJob& job) {
  bool added = false;
  if (options_.metric_file) {
    if (auto content = ReadWholeFile(options_.metric_file(job))) {
      added |= !w.collector->ObserveHypertuneFile(*content).empty();
    }
  }
  while (true) {
    StatusOr<LogPage> page = jobs_->ReadLogs(w.job_name, w.log_cursor, 1000);
    if (!page.ok() || page->lines.empty()) break;
    for (const auto& line : page->lines) {
      if (line.pool_index != 0 || line.replica_index != 0 || line.is_stderr) continue;
      added |= w.collector->ObserveStdoutLine(line.text).has_value();
    }
    w.log_cursor = page->next_cursor;
  }
  return added;
}

bool TuningJobController::PollTrial(Study& s, const std::string& trial_id) {
  auto it = s.watches.find(trial_id);
  if (it == s.watches.end()) {
    // ACTIVE in the runner without a job: cannot happen after a clean start; end it clearly.
    (void)s.runner->OnTrialEnded(trial_id, {false, "the trial's job is unknown to the server"});
    return true;
  }
  TrialWatch& w = it->second;
  StatusOr<spec::CustomJob> job = jobs_->Get(w.job_name);
  if (!job.ok()) {
    if (job.status().code() != StatusCode::kNotFound) return false;  // transient; next pass
    (void)s.runner->OnTrialEnded(
        trial_id, {false, "the trial's job " + w.job_name + " was deleted while it ran"});
    return true;
  }
  // Read what the job wrote before looking at its end, so the last report is not lost.
  bool terminal = spec::IsTerminal(job->state);
  size_t before = w.collector->measurements().size();
  bool added = ReadTrialOutput(w, *job);
  bool changed = added || w.collector->measurements().size() != before;
  if (changed) {
    (void)s.runner->UpdateMeasurements(trial_id, w.collector->measurements());
  }
  if (terminal) {
    tuning::TrialOutcome outcome;
    outcome.succeeded = job->state == JobState::kSucceeded;
    if (!outcome.succeeded) {
      outcome.error =
          job->error ? job->error->message : std::string(spec::JobStateName(job->state));
    }
    (void)s.runner->OnTrialEnded(trial_id, outcome);
    changed = true;
  }
  return changed;
}

void TuningJobController::PollStudy(Study& s) {
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
    if (!pumped.ok()) {
      std::cerr << "trainyard: " << s.job.name << ": " << pumped.ToString() << "\n";
    }
    changed |= s.runner->trials().size() != before;
  }
  AfterRunnerCall(s);
  if (changed) s.job.update_time = options_.clock();
  if (changed || s.dirty) (void)Persist(s);
}

void TuningJobController::PollOnce() {
  std::vector<std::shared_ptr<Study>> studies;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, s] : studies_) studies.push_back(s);
  }
  for (const auto& s : studies) {
    if (stopping_) return;
    // A busy runner is a request's (Create, Cancel, Delete): its call polls nothing, so skipping
    // it loses nothing, and this pass never waits behind it.
    std::unique_lock run(s->run_mu, std::try_to_lock);
    if (!run.owns_lock()) continue;
    {
      std::lock_guard lock(mu_);
      if (s->deleted) continue;
    }
    PollStudy(*s);
  }
}

void TuningJobController::Refresh(Study& s) const {
  spec::HyperparameterTuningJob& job = s.job;
  if (!s.runner) {
    job.state = JobState::kFailed;
    job.error = spec::RpcStatus{static_cast<int>(StatusCode::kDataLoss), s.restore_error};
    return;
  }
  job.trials = s.runner->trials();
  job.start_time.reset();
  bool trial_running = false;
  for (const auto& t : job.trials) {
    if (t.start_time && (!job.start_time || *t.start_time < *job.start_time)) {
      job.start_time = t.start_time;
    }
    trial_running |= IsRunningTrial(t);
  }
  job.error.reset();
  switch (s.runner->state()) {
    case tuning::StudyState::kRunning:
      job.state = job.trials.empty() ? JobState::kPending : JobState::kRunning;
      break;
    case tuning::StudyState::kSucceeded:
      job.state = JobState::kSucceeded;
      break;
    case tuning::StudyState::kFailed:
      job.state = JobState::kFailed;
      job.error =
          spec::RpcStatus{static_cast<int>(StatusCode::kFailedPrecondition), s.runner->error()};
      break;
    case tuning::StudyState::kCancelled:
      job.state = trial_running ? JobState::kCancelling : JobState::kCancelled;
      job.error = spec::RpcStatus{static_cast<int>(StatusCode::kCancelled), "CANCELED"};
      break;
  }
}

json TuningJobController::RuntimeState(const Study& s) const {
  json d = json::object();
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

Status TuningJobController::Persist(Study& s, bool insert) {
  Refresh(s);
  json runtime = RuntimeState(s);
  s.dirty = false;
  std::lock_guard persist(s.persist_mu);
  Publish(s);
  store::TuningJobRecord r;
  {
    std::lock_guard lock(mu_);
    if (s.cancel_requested) runtime["cancelRequested"] = true;
    s.stored_runtime = runtime;
    r = {s.view, std::move(runtime)};
  }
  Status st = insert ? store_->CreateTuningJob(r) : store_->UpdateTuningJob(r);
  if (!st.ok()) {
    std::cerr << "trainyard: cannot save hyperparameterTuningJob " << s.job.name << ": "
              << st.ToString() << "\n";
  }
  return st;
}

// Rebuilds the runner and the trial watches from the stored runtime state. On error the study
// keeps no runner and shows FAILED with the reason.
Status TuningJobController::RestoreRunner(Study& s, const json& runtime) {
  if (runtime.contains("restoreError")) {
    return DataLossError(runtime["restoreError"].get<std::string>());
  }
  if (!runtime.contains("runner")) return DataLossError("the record has no runner state");
  TY_ASSIGN_OR_RETURN(s.runner, tuning::StudyRunner::Restore(runtime["runner"], s.launcher.get(),
                                                             RunnerOptions(s.job.Id())));
  const json trials = runtime.value("trials", json::object());
  for (const auto& [id, w] : trials.items()) {
    TrialWatch watch;
    watch.job_name = w.value("job", "");
    watch.log_cursor = w.value("logCursor", int64_t{-1});
    watch.collector = NewCollector(s, std::nullopt);
    if (Status st = watch.collector->RestoreState(w.value("collector", json::object())); !st.ok()) {
      std::cerr << "trainyard: " << s.job.name << " trial " << id
                << ": metrics state lost: " << st.ToString() << "\n";
    }
    s.watches[id] = std::move(watch);
  }
  return Status::Ok();
}

Status TuningJobController::RestoreStudy(const store::TuningJobRecord& record) {
  auto s = std::make_shared<Study>();
  std::lock_guard run(s->run_mu);
  s->job = record.job;
  // A cancel recorded while the runner was busy, before a crash: applied by AfterRunnerCall.
  s->cancel_requested = record.runtime.value("cancelRequested", false);
  TY_ASSIGN_OR_RETURN(spec::ResourceName name,
                      spec::ResourceName::Parse(s->job.name, spec::kHyperparameterTuningJobs));
  s->parent = name.Parent();
  s->launcher = std::make_unique<Launcher>(this, s.get());
  Status restored = Status::Ok();
  try {
    restored = RestoreRunner(*s, record.runtime);
  } catch (const std::exception& e) {
    // A malformed record must not keep the server from starting; the job shows FAILED.
    restored = DataLossError(e.what());
  }
  if (!restored.ok()) {
    s->runner.reset();
    s->watches.clear();
    s->restore_error =
        record.runtime.contains("restoreError")
            ? restored.message()
            : "the stored state of this study could not be restored: " + restored.message();
    if (!s->job.end_time) s->job.end_time = options_.clock();
  } else {
    CancelOrphans(*s);
    AfterRunnerCall(*s);
  }
  {
    std::lock_guard lock(mu_);
    studies_[s->job.name] = s;
  }
  // Rewrites the record: an imported or older row gets its state, trials and error columns.
  return Persist(*s);
}

// A trial job created just before a crash, whose trial the stored state does not know, would run
// unobserved and its trial id would be reused: cancel it.
void TuningJobController::CancelOrphans(Study& s) {
  store::ListQuery q;
  q.parent = s.parent;
  q.filter = std::string("labels.") + kStudyLabel + "=\"" + s.job.Id() + "\"";
  std::string token;
  do {
    q.page_token = token;
    auto page = jobs_->List(q);
    if (!page.ok()) return;
    for (const auto& job : page->jobs) {
      bool known = false;
      for (const auto& [id, w] : s.watches) known |= w.job_name == job.name;
      if (!known && !spec::IsTerminal(job.state)) {
        std::cerr << "trainyard: " << s.job.name << ": cancelling orphan trial job " << job.name
                  << "\n";
        (void)jobs_->Cancel(job.name);
      }
    }
    token = page->next_page_token;
  } while (!token.empty());
}

Status TuningJobController::Start() {
  TY_ASSIGN_OR_RETURN(std::vector<store::TuningJobRecord> records, store_->ListAllTuningJobs());
  for (const auto& r : records) {
    uint64_t id = 0;
    try {
      id = std::stoull(r.job.Id());
    } catch (...) {
    }
    {
      std::lock_guard lock(mu_);
      last_id_ = std::max(last_id_, id);
    }
    TY_RETURN_IF_ERROR(RestoreStudy(r));
  }
  stopping_ = false;
  if (options_.poll_interval.count() > 0) {
    poller_.Start(options_.poll_interval, [this] { PollOnce(); });
  }
  return Status::Ok();
}

void TuningJobController::Stop() {
  stopping_ = true;  // the running pass returns after the study it is at
  poller_.Stop();
}

}  // namespace trainyard::controller
