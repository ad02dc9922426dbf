// JobController's admission (job_controller.h: SetDraining, quotas): the jobs it holds back from
// the executor while the server or their project is paused (draining) or while their project's
// quota is used up, and their release.
//
// Lock order: mu_ only; the store and the executor are called without it. Release() may be asked
// for from several threads at once (job ends on the executor's listener thread, admin calls,
// Create); one of them runs it and the others ask it to run another round (release_again_), so
// handing a job over never recurses into another release.
#include <algorithm>

#include "controller/job_controller.h"
#include "spec/custom_job_validation.h"

namespace trainyard::controller {

namespace {

// The failure of a job whose scheduling.maxWaitDuration passed before it started, then why it
// waited (a held job's reason, or kExecutorQueued).
constexpr char kMaxWaitPassed[] =
    "the job waited longer than its scheduling.maxWaitDuration without starting; ";
constexpr char kExecutorQueued[] =
    "queued in the executor: what its replicas ask for was never free at once";

}  // namespace

ResourceAmount JobController::DemandOf(const spec::CustomJob& job) {
  ResourceAmount demand;
  demand.jobs = 1;
  for (const auto& pool : job.job_spec.worker_pool_specs) {
    if (pool.IsEmpty() || !pool.machine_spec) continue;
    // Create validated the machine spec; a job stored by an older catalog counts what resolves.
    auto m = spec::ResolveMachineSpec(*pool.machine_spec, "machineSpec");
    if (!m.ok()) continue;
    const double n = static_cast<double>(pool.replica_count);
    demand.vcpus += n * m->vcpus;
    demand.memory_gib += n * m->memory_gib;
    if (!m->accelerator_type.empty() && m->accelerator_count > 0) {
      demand.gpus[m->accelerator_type] += static_cast<int>(n) * m->accelerator_count;
    }
  }
  return demand;
}

Status JobController::CheckQuota(const std::string& project, const spec::CustomJob& job) const {
  if (options_.quotas == nullptr) return Status::Ok();
  auto quota = options_.quotas->Get(project);
  return quota ? CheckWithinQuota(project, *quota, DemandOf(job)) : Status::Ok();
}

bool JobController::Hold(const spec::CustomJob& job, const executor::GangSpec& gang) {
  HeldJob held{job.name, gang, DemandOf(job), {}, WaitDeadline(job)};
  const auto quota =
      options_.quotas ? options_.quotas->Get(gang.project) : std::optional<ProjectQuota>();
  {
    std::lock_guard lock(mu_);
    if (cancel_while_submitting_.count(gang.job_id) > 0) return false;  // HandOver settles it
    if (std::string paused = PauseOf(gang.project); !paused.empty()) {
      held.noted = std::move(paused);
    } else if (quota) {
      // Behind the project's earlier held jobs, or over what the project has free: Release()
      // decides, in the project's order.
      const bool queue_behind = std::any_of(held_.begin(), held_.end(), [&](const HeldJob& h) {
        return h.gang.project == gang.project;
      });
      held.noted = Shortfall(gang.project, *quota, used_[gang.project], held.demand);
      if (held.noted.empty() && queue_behind) {
        held.noted =
            "held: behind earlier jobs of project " + gang.project + " that wait for its quota";
      }
    }
    if (held.noted.empty()) {
      Admit(gang.job_id, gang.project, held.demand, held.wait_deadline);
      return false;
    }
    held_.push_back(held);
    submitting_.erase(gang.job_id);
    names_by_id_[gang.job_id] = job.name;
  }
  NoteHeld(job.name, held.noted);
  if (!draining()) Release();  // a higher priority may go ahead of the project's held jobs
  return true;
}

void JobController::NoteHeld(const std::string& name, const std::string& reason) {
  // The reason, in the job's history and describe (best effort: the job is held either way).
  int64_t steps = 0;
  auto noted = store_->Mutate(name, [&](spec::CustomJob& stored) {
    steps = stored.trainyard_info ? stored.trainyard_info->steps_appended : 0;
    if (stored.state != spec::JobState::kQueued) {
      return Status(StatusCode::kAborted, "no longer queued");
    }
    spec::RecordStateChange(stored, spec::JobState::kQueued, clock_(), reason);
    return Status::Ok();
  });
  if (noted.ok()) Announce(*noted, steps);
}

std::optional<TimePoint> JobController::WaitDeadline(const spec::CustomJob& job) {
  const auto& s = job.job_spec.scheduling;
  if (!s || !s->max_wait_duration || s->max_wait_duration->count() <= 0 || !job.create_time) {
    return std::nullopt;
  }
  return *job.create_time + *s->max_wait_duration;
}

void JobController::Admit(const std::string& id, const std::string& project,
                          const ResourceAmount& demand, std::optional<TimePoint> wait_deadline) {
  if (admitted_.count(id) > 0) return;
  admitted_[id] = {project, demand, wait_deadline};
  used_[project].Add(demand);
}

bool JobController::Unadmit(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = admitted_.find(id);
  if (it == admitted_.end()) return false;
  used_[it->second.project].Subtract(it->second.demand);
  if (used_[it->second.project].jobs <= 0) used_.erase(it->second.project);
  admitted_.erase(it);
  return true;
}

void JobController::Unhold(const std::string& id) {
  std::lock_guard lock(mu_);
  std::erase_if(held_, [&id](const HeldJob& h) { return h.gang.job_id == id; });
  std::erase_if(parked_, [&id](const HeldJob& h) { return h.gang.job_id == id; });
}

std::vector<JobController::HeldJob> JobController::TakeReleasable(
    std::vector<HeldJob>* expired, std::vector<std::pair<std::string, std::string>>* notes) {
  std::vector<HeldJob> go;
  const auto now = clock_();
  // Higher priority first; among equals, the order they were held in (stable).
  std::stable_sort(held_.begin(), held_.end(), [](const HeldJob& a, const HeldJob& b) {
    return a.gang.priority > b.gang.priority;
  });
  std::set<std::string> blocked;  // projects whose first held job does not fit: the rest wait
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->wait_deadline && now >= *it->wait_deadline) {
      expired->push_back(std::move(*it));
      it = held_.erase(it);
      continue;
    }
    const std::string& project = it->gang.project;
    if (std::string paused = PauseOf(project); !paused.empty()) {
      if (it->noted != paused) {  // a job held by its quota, then by a pause
        it->noted = paused;
        notes->push_back({it->name, paused});
      }
      ++it;
      continue;
    }
    const auto quota = options_.quotas ? options_.quotas->Get(project) : std::nullopt;
    std::string why = blocked.count(project) > 0 || !quota
                          ? ""
                          : Shortfall(project, *quota, used_[project], it->demand);
    if (blocked.count(project) > 0 || !why.empty()) {
      // Said once per kind of wait: a drain-held job that now waits for its quota says so.
      if (!why.empty() && it->noted.find("quota") == std::string::npos) {
        it->noted = why;
        notes->push_back({it->name, why});
      }
      blocked.insert(project);
      ++it;
      continue;
    }
    Admit(it->gang.job_id, project, it->demand, it->wait_deadline);
    submitting_.insert(it->gang.job_id);
    go.push_back(std::move(*it));
    it = held_.erase(it);
  }
  return go;
}

size_t JobController::Release() {
  {
    std::lock_guard lock(mu_);
    if (releasing_) {
      release_again_ = true;
      return 0;
    }
    releasing_ = true;
  }
  size_t handed = 0;
  for (;;) {
    std::vector<HeldJob> go, expired;
    std::vector<std::pair<std::string, std::string>> notes;
    {
      std::lock_guard lock(mu_);
      release_again_ = false;
      if (paused_.count(kServerScope) == 0) go = TakeReleasable(&expired, &notes);
    }
    for (const auto& [name, why] : notes) NoteHeld(name, why);
    for (const HeldJob& h : expired) ExpireHeld(h);
    for (const HeldJob& h : go) handed += HandOverReleased(h) ? 1 : 0;
    std::lock_guard lock(mu_);
    if (!release_again_) {
      releasing_ = false;
      return handed;
    }
  }
}

void JobController::ExpireHeld(const HeldJob& h) {
  MarkFailed(h.name, static_cast<int>(StatusCode::kResourceExhausted), kMaxWaitPassed + h.noted);
}

void JobController::ExpireQueued() {
  std::vector<std::string> due;
  {
    std::lock_guard lock(mu_);
    const auto now = clock_();
    for (const auto& [id, admitted] : admitted_) {
      if (admitted.wait_deadline && now >= *admitted.wait_deadline) due.push_back(id);
    }
  }
  for (const std::string& id : due) {
    // The executor's word, not the stored state: a start it has not reported yet still counts.
    auto status = executor_->Get(id);
    if (!status.ok()) continue;  // not submitted yet: the next tick looks again
    std::string name;
    {
      std::lock_guard lock(mu_);
      auto admitted = admitted_.find(id);
      auto named = names_by_id_.find(id);
      if (admitted == admitted_.end() || named == names_by_id_.end()) continue;
      if (status->state != executor::GangState::kQueued) {
        admitted->second.wait_deadline.reset();  // started: the limit is spent
        continue;
      }
      name = named->second;
    }
    // Failed first, then cancelled: the CANCELLED the executor reports next finds the job ended.
    MarkFailed(name, static_cast<int>(StatusCode::kResourceExhausted),
               kMaxWaitPassed + (status->waiting_note.empty() ? std::string(kExecutorQueued)
                                                              : "queued: " + status->waiting_note));
    (void)executor_->Cancel(id);
  }
}

bool JobController::HandOverReleased(const HeldJob& h) {
  auto stored = store_->Get(h.name);
  if (!stored.ok() || spec::IsTerminal(stored->state)) {
    {
      std::lock_guard lock(mu_);
      submitting_.erase(h.gang.job_id);
      names_by_id_.erase(h.gang.job_id);
    }
    Finished(h.gang.job_id);  // gives back what TakeReleasable counted
    return false;
  }
  if (stored->state == spec::JobState::kCancelling) {
    {
      std::lock_guard lock(mu_);
      submitting_.erase(h.gang.job_id);
    }
    FinishCancelled(h.name, h.gang.job_id);
    return false;
  }
  (void)HandOver(*stored, h.gang);
  return true;
}

std::string JobController::PauseOf(const std::string& project) const {
  for (const std::string& scope : {std::string(kServerScope), project}) {
    if (auto it = paused_.find(scope); it != paused_.end()) return PauseReason(scope, it->second);
  }
  return "";
}

size_t JobController::SetPaused(const std::string& scope, std::optional<TimePoint> since) {
  std::vector<std::pair<std::string, std::string>> queued;  // the executor's queue: name, id
  {
    std::lock_guard lock(mu_);
    if (since) {
      paused_.emplace(scope, *since);
    } else {
      paused_.erase(scope);
    }
    for (const auto& [id, admitted] : admitted_) {
      const auto named = names_by_id_.find(id);
      if (since && named != names_by_id_.end() &&
          (scope == kServerScope || admitted.project == scope)) {
        queued.push_back({named->second, id});
      }
    }
  }
  // The executor holds the scope's gangs it has queued (not those it started), and those jobs
  // say why in their history, as held ones do.
  executor_->SetPaused(scope, since.has_value());
  for (const auto& [name, id] : queued) {
    auto gang = executor_->Get(id);
    if (gang.ok() && gang->state == executor::GangState::kQueued) {
      NoteHeld(name, PauseReason(scope, *since));
    }
  }
  // A project's pause is noted in the history of its jobs held already (by its quota) too.
  return since && scope == kServerScope ? 0 : Release();
}

size_t JobController::SetDraining(bool draining) {
  return SetPaused(kServerScope, draining ? std::optional<TimePoint>(clock_()) : std::nullopt);
}

size_t JobController::QuotasChanged() { return Release(); }

void JobController::Tick() {
  Release();
  ExpireQueued();
}

bool JobController::draining() const {
  std::lock_guard lock(mu_);
  return paused_.count(kServerScope) > 0;
}

std::map<std::string, TimePoint> JobController::paused_projects() const {
  std::lock_guard lock(mu_);
  std::map<std::string, TimePoint> out = paused_;
  out.erase(kServerScope);
  return out;
}

size_t JobController::held_jobs() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

std::map<std::string, ProjectUse> JobController::ProjectUses() const {
  std::lock_guard lock(mu_);
  std::map<std::string, ProjectUse> out;
  for (const auto& [project, used] : used_) out[project].used = used;
  for (const HeldJob& h : held_) out[h.gang.project].held_jobs += 1;
  for (const auto& [scope, since] : paused_) {
    if (scope != kServerScope) out[scope].paused_since = since;
  }
  return out;
}

}  // namespace trainyard::controller
