#include "controller/job_controller.h"

#include <algorithm>
#include <system_error>

#include "common/beneath.h"
#include "common/bucket_path.h"
#include "common/disk_fault.h"
#include "common/time.h"
#include "controller/job_files.h"
#include "executor/job_dir_layout.h"
#include "executor/run_as.h"
#include "replica_contract/replica_contract.h"
#include "spec/custom_job_json.h"
#include "spec/custom_job_validation.h"
#include "spec/job_priority.h"
#include "spec/resource_name.h"

namespace trainyard::controller {
namespace {

using executor::GangState;
using spec::CustomJob;
using spec::JobState;

JobState ToJobState(GangState s) {
  switch (s) {
    case GangState::kQueued:
      return JobState::kQueued;
    case GangState::kPending:
      return JobState::kPending;
    case GangState::kRunning:
      return JobState::kRunning;
    case GangState::kSucceeded:
      return JobState::kSucceeded;
    case GangState::kFailed:
      return JobState::kFailed;
    case GangState::kCancelling:
      return JobState::kCancelling;
    case GangState::kCancelled:
      return JobState::kCancelled;
  }
  return JobState::kUnspecified;
}

// A timeline step per replica restart (restarts only grow): which replica, its exit code.
int64_t StepsAppended(const spec::CustomJob& job) {
  return job.trainyard_info ? job.trainyard_info->steps_appended : 0;
}

// A replica waiting to restart (restart backoff), once per wait: "workerpool0-0 restarting in
// 2s (restart 2 of 3)" in the history (and so in the server log).
void RecordRestartWaits(spec::CustomJob& job, const executor::GangStatus& status,
                        spec::Timestamp now) {
  for (const auto& r : status.replicas) {
    if (r.restart_note.empty()) continue;
    const std::string detail =
        replica_contract::TaskName(r.pool_index, r.replica_index) + " " + r.restart_note;
    const auto& history = job.trainyard_info->state_history;
    if (std::any_of(history.begin(), history.end(),
                    [&](const spec::StateChange& c) { return c.detail == detail; })) {
      continue;
    }
    spec::RecordStateChange(job, job.state, now, detail);
  }
}

void RecordRestarts(spec::CustomJob& job, const executor::GangStatus& status, spec::Timestamp now) {
  if (!job.trainyard_info) return;
  RecordRestartWaits(job, status, now);
  // Why a queued job waits (the Slurm controller unreachable), once per distinct reason.
  const auto& history = job.trainyard_info->state_history;
  if (!status.waiting_note.empty() &&
      (history.empty() || history.back().detail != status.waiting_note)) {
    spec::RecordStateChange(job, job.state, now, status.waiting_note);
  }
  for (const auto& r : status.replicas) {
    for (const auto& before : job.trainyard_info->replicas) {
      if (before.pool_index != r.pool_index || before.replica_index != r.replica_index ||
          r.restarts <= before.restarts) {
        continue;
      }
      std::string detail = replica_contract::TaskName(r.pool_index, r.replica_index) +
                           " restarted (restart " + std::to_string(r.restarts);
      if (before.exit_code)
        detail += ", it had exited with code " + std::to_string(*before.exit_code);
      spec::RecordStateChange(job, job.state, now, detail + ")");
    }
  }
}

// What the executor will do otherwise than asked (oversubscription), in the timeline at QUEUED:
// the first few notes, then how many more there are, so a 500-replica job keeps its history.
void RecordAdmissionNotes(spec::CustomJob& job, const std::vector<std::string>& notes,
                          spec::Timestamp now) {
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < notes.size() && i < kShown; ++i) {
    spec::RecordStateChange(job, JobState::kQueued, now, notes[i]);
  }
  if (notes.size() > kShown) {
    spec::RecordStateChange(
        job, JobState::kQueued, now,
        "and " + std::to_string(notes.size() - kShown) + " more replicas likewise");
  }
}

// Marker error: the mutation decided there is nothing to write.
Status NothingToWrite() { return Status(StatusCode::kAborted, "nothing to write"); }

}  // namespace

JobController::JobController(store::JobStore* store, executor::Executor* executor,
                             const spec::ImageCatalog* images, PriceFn prices,
                             JobControllerOptions options, Clock clock)
    : store_(store),
      executor_(executor),
      images_(images),
      prices_(std::move(prices)),
      options_(std::move(options)),
      clock_(OrSystemClock(std::move(clock))),
      replica_users_(options_.replica_users) {}

void JobController::SetReplicaUsers(const ReplicaUsers* users) { replica_users_.store(users); }

std::string JobController::NewJobId() {
  // Numeric like Vertex ids, increasing with time so ids sort by creation.
  uint64_t now_us = static_cast<uint64_t>(ToUnixMicros(clock_()));
  std::lock_guard lock(mu_);
  last_id_ = std::max(last_id_ + 1, now_us * 1000);
  return std::to_string(last_id_);
}

double JobController::HourlyCost(const spec::CustomJobSpec& spec) const {
  double total = 0;
  for (const auto& pool : spec.worker_pool_specs) {
    if (pool.IsEmpty() || !pool.machine_spec || !prices_) continue;
    total += static_cast<double>(pool.replica_count) * prices_(*pool.machine_spec).value_or(0.0);
  }
  return total;
}

CustomJob JobController::Decorate(CustomJob job) const {
  if (job.trainyard_info && job.start_time) {
    auto end = job.end_time.value_or(clock_());
    double hours = std::chrono::duration<double>(end - *job.start_time).count() / 3600.0;
    job.trainyard_info->estimated_cost_usd =
        std::max(0.0, hours) * job.trainyard_info->hourly_cost_usd;
  }
  return job;
}

StatusOr<executor::GangSpec> JobController::BuildGang(const CustomJob& job) const {
  executor::GangSpec gang;
  gang.job_id = job.Id();
  gang.job_name = job.name;
  gang.job_dir = executor::JobDir(options_.jobs_dir, gang.job_id);
  gang.base_output_dir = job.job_spec.base_output_directory;
  TY_ASSIGN_OR_RETURN(spec::ResourceName resource,
                      spec::ResourceName::Parse(job.name, spec::kCustomJobs));
  gang.project = resource.location.project;
  TY_ASSIGN_OR_RETURN(gang.priority, spec::PriorityFromLabels(job.labels));
  // Vertex hands every replica its job's spec, as a string in CLUSTER_SPEC's and TF_CONFIG's
  // "job" field (replica_contract.h); this is the spec as stored, defaults filled in.
  // Trainyard's own fields (the legacy primary-role name) are not Vertex's: replicas never see
  // them.
  nlohmann::json spec_json = spec::CustomJobSpecToJson(job.job_spec);
  spec_json.erase("trainyardTfConfigPrimaryRole");
  gang.job_spec_json = spec_json.dump();
  if (job.job_spec.tf_config_primary_role == "master") gang.tf_config_primary_role = "master";
  gang.kill_grace = options_.kill_grace;
  gang.max_restarts = options_.max_restarts;
  gang.service_account = job.job_spec.service_account;
  if (const ReplicaUsers* users = replica_users_.load(); users != nullptr) {
    TY_ASSIGN_OR_RETURN(gang.run_as, users->Resolve(gang.project, job.job_spec.service_account));
  }
  gang.timeout = options_.default_timeout;
  if (const auto& s = job.job_spec.scheduling) {
    if (s->timeout) {
      gang.timeout = std::chrono::ceil<std::chrono::seconds>(*s->timeout);
    }
    gang.restart_job_on_worker_restart = s->restart_job_on_worker_restart && !s->disable_retries;
    if (s->disable_retries) gang.max_restarts = 0;
  }
  const std::map<std::string, std::string> service_env =
      options_.service_env ? options_.service_env() : std::map<std::string, std::string>{};
  const auto& pools = job.job_spec.worker_pool_specs;
  for (size_t i = 0; i < pools.size(); ++i) {
    const auto& pool = pools[i];
    if (pool.IsEmpty()) continue;
    TY_ASSIGN_OR_RETURN(
        spec::ResolvedCommand cmd,
        images_->Resolve(pool, "jobSpec.workerPoolSpecs[" + std::to_string(i) + "]"));
    for (int64_t r = 0; r < pool.replica_count; ++r) {
      executor::ReplicaSpec replica;
      replica.pool_index = static_cast<int>(i);
      replica.replica_index = static_cast<int>(r);
      replica.machine_type = pool.machine_spec->machine_type;
      replica.accelerator_type = pool.machine_spec->accelerator_type;
      replica.accelerator_count = pool.machine_spec->accelerator_count;
      replica.argv = cmd.argv;
      replica.env = cmd.env;
      replica.image = cmd.image;
      replica.image_field = cmd.image_field;
      replica.command = cmd.command;
      replica.args = cmd.args;
      replica.mounts = cmd.mounts;
      for (auto& [key, value] : service_env) replica.env.emplace(key, value);  // user env wins
      gang.replicas.push_back(std::move(replica));
    }
  }
  // A gang of several replicas restarts as a whole when one of them fails: synchronous data
  // parallelism (c10d, Horovod, MultiWorkerMirroredStrategy) cannot take back a single replaced
  // member — the survivors' collectives fail and the new one would rendezvous alone. On Vertex
  // this needs restartJobOnWorkerRestart; here it is the default for multi-replica jobs
  // (docs/api.md). disableRetries still means no restart at all.
  if (gang.replicas.size() > 1 && gang.max_restarts > 0) gang.restart_job_on_worker_restart = true;
  return gang;
}

namespace {

// The job a create request asks for, with the defaults Vertex fills in (so describe shows what
// the job got).
CustomJob JobFromRequest(CustomJob request) {
  CustomJob job;
  job.display_name = std::move(request.display_name);
  job.labels = std::move(request.labels);
  job.job_spec = std::move(request.job_spec);
  for (auto& pool : job.job_spec.worker_pool_specs) {
    if (pool.IsEmpty()) continue;
    if (!pool.disk_spec) pool.disk_spec = spec::DiskSpec{};
    if (pool.disk_spec->boot_disk_type.empty()) pool.disk_spec->boot_disk_type = "pd-ssd";
    if (pool.disk_spec->boot_disk_size_gb == 0) pool.disk_spec->boot_disk_size_gb = 100;
  }
  return job;
}

// A base output dir in a bucket that does not exist is refused (a typo must not make a bucket).
// The executor gives a replica of another user its output dirs (executor::PrepareReplicaDirs);
// one that exists already and that user cannot write is refused here, before the job queues,
// instead of failing the run when it exports.
Status CheckOutputs(const executor::GangSpec& gang, const JobControllerOptions& options) {
  if (options.check_bucket && IsGcsUri(gang.base_output_dir)) {
    if (Status bucket = options.check_bucket(gang.base_output_dir); !bucket.ok()) {
      return InvalidFieldError("jobSpec.baseOutputDirectory.outputUriPrefix", bucket.message());
    }
  }
  if (!gang.run_as) return Status::Ok();
  const auto trial = gang.extra_env.find("CLOUD_ML_TRIAL_ID");
  return executor::CheckOutputDirs(gang.base_output_dir,
                                   trial == gang.extra_env.end() ? "" : trial->second, *gang.run_as)
      .WithPrefix("jobSpec.baseOutputDirectory.outputUriPrefix");
}

}  // namespace

Status JobController::ValidateGang(const executor::GangSpec& gang) const {
  Status v = executor_->Validate(gang);
  if (v.ok()) return v;
  std::string msg = v.message();
  if (msg.starts_with("workerPoolSpecs")) msg = "jobSpec." + msg;
  return Status(v.code(), msg);
}

Status JobController::Validate(const std::string& parent, CustomJob request) const {
  TY_ASSIGN_OR_RETURN(spec::LocationName location, spec::LocationName::Parse(parent));
  TY_RETURN_IF_ERROR(spec::ValidateCustomJob(request));
  CustomJob job = JobFromRequest(std::move(request));
  job.name = spec::ResourceName::Of(location, spec::kCustomJobs, "0").ToString();
  TY_ASSIGN_OR_RETURN(executor::GangSpec gang, BuildGang(job));
  TY_RETURN_IF_ERROR(ValidateGang(gang));
  TY_RETURN_IF_ERROR(CheckOutputs(gang, options_));
  return CheckQuota(gang.project, job);
}

StatusOr<CustomJob> JobController::Create(const std::string& parent, CustomJob request,
                                          const std::string& id) {
  TY_ASSIGN_OR_RETURN(spec::LocationName location, spec::LocationName::Parse(parent));
  TY_RETURN_IF_ERROR(spec::ValidateCustomJob(request));
  std::optional<spec::Creator> creator;
  if (request.trainyard_info) creator = std::move(request.trainyard_info->creator);
  CustomJob job = JobFromRequest(std::move(request));
  job.name =
      spec::ResourceName::Of(location, spec::kCustomJobs, id.empty() ? NewJobId() : id).ToString();
  TY_ASSIGN_OR_RETURN(executor::GangSpec gang, BuildGang(job));
  TY_RETURN_IF_ERROR(ValidateGang(gang));
  TY_RETURN_IF_ERROR(CheckOutputs(gang, options_));
  TY_RETURN_IF_ERROR(CheckQuota(gang.project, job));

  auto now = clock_();
  job.state = JobState::kQueued;
  job.create_time = now;
  job.update_time = now;
  spec::TrainyardInfo info;
  info.hourly_cost_usd = HourlyCost(job.job_spec);
  info.creator = std::move(creator);
  for (const auto& r : gang.replicas)
    info.replicas.push_back({r.pool_index, r.replica_index, {}, 0});
  job.trainyard_info = info;
  spec::RecordStateChange(job, JobState::kQueued, now);
  RecordAdmissionNotes(job, executor_->AdmissionNotes(gang), now);
  TY_RETURN_IF_ERROR(StoreNew(location, job, gang, /*fixed_id=*/!id.empty()));
  Announce(job, 0);
  if (Hold(job, gang)) return Decorate(job);
  return HandOver(job, gang);
}

// The job is in submitting_ from before it becomes visible in the store until Submit has
// returned (HandOver), so a Cancel in between is recorded instead of finding no gang (and being
// lost).
Status JobController::StoreNew(const spec::LocationName& location, CustomJob& job,
                               executor::GangSpec& gang, bool fixed_id) {
  auto store_job = [&] {
    {
      std::lock_guard lock(mu_);
      submitting_.insert(gang.job_id);
    }
    Status s = store_->Create(job);
    if (!s.ok()) {
      std::lock_guard lock(mu_);
      submitting_.erase(gang.job_id);
    }
    return s;
  };
  Status created = store_job();
  for (int attempt = 0; !fixed_id && created.code() == StatusCode::kAlreadyExists && attempt < 3;
       ++attempt) {
    job.name = spec::ResourceName::Of(location, spec::kCustomJobs, NewJobId()).ToString();
    gang.job_id = job.Id();
    gang.job_name = job.name;
    gang.job_dir = executor::JobDir(options_.jobs_dir, gang.job_id);
    created = store_job();
  }
  return created;
}

StatusOr<CustomJob> JobController::HandOver(const CustomJob& job, const executor::GangSpec& gang) {
  bool cancelled_before_submit = false;
  {
    std::lock_guard lock(mu_);
    names_by_id_[gang.job_id] = job.name;
    cancelled_before_submit = cancel_while_submitting_.count(gang.job_id) > 0;
  }
  // A cancel that came before Submit: the gang is never handed over, so nothing ever runs.
  Status submitted = cancelled_before_submit
                         ? Status(StatusCode::kCancelled, "cancelled before it was submitted")
                         : executor_->Submit(gang);
  bool cancelled = false;
  {
    std::lock_guard lock(mu_);
    submitting_.erase(gang.job_id);
    cancelled = cancel_while_submitting_.erase(gang.job_id) > 0;
  }
  if (cancelled) {
    // Cancel saw the job in submitting_ and left this to us. A submitted gang is cancelled now
    // (if it was admitted meanwhile, it gets the normal SIGTERM/grace stop); the listener or
    // the NOT_FOUND branch below brings the stored job to CANCELLED.
    Status s = submitted.ok() ? executor_->Cancel(gang.job_id) : NotFoundError("not submitted");
    if (s.code() == StatusCode::kNotFound) FinishCancelled(job.name, gang.job_id);
  } else if (IsDiskFault(submitted)) {
    // The job is stored and acknowledged: it waits for room instead of failing.
    Park(job, gang, submitted);
    return Decorate(job);
  } else if (!submitted.ok()) {
    MarkFailed(job.name, static_cast<int>(submitted.code()),
               "the executor refused the job: " + submitted.message());
  }
  if (cancelled || !submitted.ok()) {
    auto stored = store_->Get(job.name);
    return stored.ok() ? Decorate(*stored) : stored;
  }
  return Decorate(job);
}

void JobController::FinishCancelled(const std::string& name, const std::string& id) {
  executor::GangStatus cancelled;
  cancelled.job_id = id;
  cancelled.state = GangState::kCancelled;
  cancelled.end_time = clock_();
  ApplyStatus(name, cancelled);
  {
    std::lock_guard lock(mu_);
    names_by_id_.erase(id);
  }
  Finished(id);
}

void JobController::Finished(const std::string& id) {
  if (Unadmit(id)) Release();
}

StatusOr<CustomJob> JobController::Get(const std::string& name) {
  TY_ASSIGN_OR_RETURN(CustomJob job, store_->Get(name));
  return Decorate(std::move(job));
}

StatusOr<store::ListResult> JobController::List(const store::ListQuery& query) {
  TY_ASSIGN_OR_RETURN(store::ListResult result, store_->List(query));
  for (auto& job : result.jobs) job = Decorate(std::move(job));
  return result;
}

Status JobController::Cancel(const std::string& name) {
  int64_t steps = 0;
  auto marked = store_->Mutate(name, [&](CustomJob& job) {
    steps = StepsAppended(job);
    if (spec::IsTerminal(job.state)) {
      return FailedPreconditionError("The CustomJob \"" + name + "\" is in state " +
                                     std::string(spec::JobStateName(job.state)) +
                                     " and cannot be cancelled.");
    }
    if (job.state == JobState::kCancelling) return NothingToWrite();
    job.state = JobState::kCancelling;
    job.update_time = clock_();
    spec::RecordStateChange(job, JobState::kCancelling, *job.update_time, "cancel requested");
    return Status::Ok();
  });
  if (!marked.ok() && marked.status().code() != StatusCode::kAborted) return marked.status();
  if (marked.ok()) Announce(*marked, steps);
  const std::string id(spec::LastSegment(name));
  {
    std::lock_guard lock(mu_);
    if (submitting_.count(id) > 0) {
      // Create has not finished handing the gang over; it cancels it once Submit returns.
      cancel_while_submitting_.insert(id);
      return Status::Ok();
    }
  }
  Status s = executor_->Cancel(id);
  if (s.code() == StatusCode::kNotFound) {
    // The executor never got the gang (held, or lost): nothing runs, so the job ends here.
    Unhold(id);
    FinishCancelled(name, id);
    return Status::Ok();
  }
  return s;
}

void JobController::OnGangStatus(const executor::GangStatus& status) {
  std::string name;
  bool ended = false;
  {
    std::lock_guard lock(mu_);
    auto it = names_by_id_.find(status.job_id);
    if (it == names_by_id_.end()) return;  // deleted or never ours
    name = it->second;
    if (executor::GangState s = status.state;
        s == GangState::kSucceeded || s == GangState::kFailed || s == GangState::kCancelled) {
      names_by_id_.erase(it);
      ended = true;
    }
  }
  ApplyStatus(name, status);
  if (ended) Finished(status.job_id);
}

void JobController::ApplyStatus(const std::string& name, const executor::GangStatus& status) {
  std::lock_guard write_lock(write_mu_);
  KeepIfFailed(WriteStatus(name, status), {name, status, std::nullopt});
}

Status JobController::WriteStatus(const std::string& name, const executor::GangStatus& status) {
  int64_t steps = 0;
  auto result = store_->Mutate(name, [&](CustomJob& job) {
    steps = StepsAppended(job);
    if (spec::IsTerminal(job.state)) return NothingToWrite();
    JobState next = ToJobState(status.state);
    if (job.state == JobState::kCancelling && !spec::IsTerminal(next)) next = JobState::kCancelling;
    auto now = clock_();
    job.state = next;
    job.update_time = now;
    if (status.start_time && !job.start_time) job.start_time = status.start_time;
    if (next == JobState::kRunning && !job.start_time) job.start_time = now;
    if (spec::IsTerminal(next)) job.end_time = status.end_time.value_or(now);
    if (next == JobState::kFailed) {
      bool timed_out = status.failure == executor::GangFailure::kTimeout;
      std::string message = status.error_message.empty() ? "The job failed." : status.error_message;
      StatusCode code = timed_out ? StatusCode::kDeadlineExceeded : StatusCode::kInvalidArgument;
      if (status.failure == executor::GangFailure::kImageUnavailable) {
        // The reason stays machine-readable in the job's error, as Vertex's console shows it.
        code = StatusCode::kFailedPrecondition;
        message = executor::GangFailureName(status.failure) + ": " + message;
      }
      // A replica's configuration error (exit 78): the job cannot run as configured.
      if (status.failure == executor::GangFailure::kConfigError) {
        code = StatusCode::kFailedPrecondition;
      }
      job.error = spec::RpcStatus{static_cast<int>(code), message};
    } else if (next == JobState::kCancelled) {
      job.error = spec::RpcStatus{static_cast<int>(StatusCode::kCancelled), "CANCELED"};
    }
    RecordRestarts(job, status, now);
    if (!status.replicas.empty()) {
      if (!job.trainyard_info) job.trainyard_info = spec::TrainyardInfo{};
      job.trainyard_info->replicas.clear();
      for (const auto& r : status.replicas) {
        job.trainyard_info->replicas.push_back(
            {r.pool_index, r.replica_index, r.exit_code, r.restarts});
      }
    }
    spec::RecordStateChange(job, next, spec::IsTerminal(next) ? *job.end_time : now,
                            spec::IsTerminal(next) ? status.error_message : "");
    if (spec::IsTerminal(next)) job = Decorate(std::move(job));
    return Status::Ok();
  });
  // NOT_FOUND: deleted meanwhile; ABORTED: nothing to write (ended already, and said so then).
  if (!result.ok()) {
    const StatusCode code = result.status().code();
    return code == StatusCode::kNotFound || code == StatusCode::kAborted ? Status::Ok()
                                                                         : result.status();
  }
  Announce(*result, steps);
  Ended(*result);
  return Status::Ok();
}

void JobController::Announce(const CustomJob& job, int64_t steps_before) const {
  if (!options_.on_job_step || !job.trainyard_info) return;
  const std::vector<spec::StateChange>& history = job.trainyard_info->state_history;
  const size_t added = static_cast<size_t>(
      std::clamp<int64_t>(StepsAppended(job) - steps_before, 0, history.size()));
  for (size_t i = history.size() - added; i < history.size(); ++i) {
    options_.on_job_step(job, history[i]);
  }
}

void JobController::Ended(const CustomJob& job) const {
  if (spec::IsTerminal(job.state) && options_.on_job_end) options_.on_job_end(job);
}

void JobController::MarkFailed(const std::string& name, int code, const std::string& message) {
  {
    std::lock_guard write_lock(write_mu_);
    KeepIfFailed(WriteFailure(name, code, message),
                 {name, std::nullopt, std::make_pair(code, message)});
  }
  // A failed job counts against its project's quota no longer, stored yet or not (outside
  // write_mu_: Release may hand held jobs over, whose statuses take it).
  Finished(std::string(spec::LastSegment(name)));
}

Status JobController::WriteFailure(const std::string& name, int code, const std::string& message) {
  int64_t steps = 0;
  auto result = store_->Mutate(name, [&](CustomJob& job) {
    steps = StepsAppended(job);
    if (spec::IsTerminal(job.state)) return NothingToWrite();
    auto now = clock_();
    job.state = JobState::kFailed;
    job.update_time = now;
    job.end_time = now;
    job.error = spec::RpcStatus{code, message};
    spec::RecordStateChange(job, JobState::kFailed, now, message);
    return Status::Ok();
  });
  if (!result.ok()) {
    const StatusCode failed = result.status().code();
    return failed == StatusCode::kNotFound || failed == StatusCode::kAborted ? Status::Ok()
                                                                             : result.status();
  }
  Announce(*result, steps);
  Ended(*result);
  std::lock_guard lock(mu_);
  names_by_id_.erase(std::string(spec::LastSegment(name)));
  return Status::Ok();
}

Status JobController::Start() {
  executor_->SetListener([this](const executor::GangStatus& s) { OnGangStatus(s); });
  TY_ASSIGN_OR_RETURN(std::vector<CustomJob> unfinished, store_->ListUnfinished());
  for (const CustomJob& job : unfinished) {
    {
      std::lock_guard lock(mu_);
      names_by_id_[job.Id()] = job.name;
      uint64_t numeric = 0;
      if (std::sscanf(job.Id().c_str(), "%lu", &numeric) == 1)
        last_id_ = std::max(last_id_, numeric);
    }
    auto gang = BuildGang(job);
    if (!gang.ok()) {
      MarkFailed(job.name, static_cast<int>(StatusCode::kInternal),
                 "could not be restarted after a server restart: " + gang.status().message());
      continue;
    }
    if (job.state == JobState::kQueued && !std::filesystem::exists(gang->job_dir)) {
      if (Hold(job, *gang)) continue;
      if (Status s = executor_->Submit(*gang); IsDiskFault(s)) {
        Park(job, *gang, s);
      } else if (!s.ok()) {
        MarkFailed(job.name, static_cast<int>(s.code()),
                   "could not be queued again after a server restart: " + s.message());
      }
      continue;
    }
    {
      // In the executor already: it counts against its project's quota until it ends.
      std::lock_guard lock(mu_);
      Admit(gang->job_id, gang->project, DemandOf(job),
            job.state == JobState::kQueued ? WaitDeadline(job) : std::nullopt);
    }
    auto adopted = executor_->Adopt(*gang);
    if (!adopted.ok()) {
      MarkFailed(job.name, static_cast<int>(StatusCode::kInternal),
                 "could not be re-adopted after a server restart: " + adopted.status().message());
      continue;
    }
    OnGangStatus(*adopted);
    if (job.state == JobState::kCancelling) (void)executor_->Cancel(job.Id());
  }
  return Status::Ok();
}

}  // namespace trainyard::controller
