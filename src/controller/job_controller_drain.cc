// JobController's draining (job_controller.h: SetDraining): the held jobs and their release.
#include <algorithm>

#include "controller/job_controller.h"

namespace trainyard::controller {

namespace {

constexpr char kHeldStep[] =
    "held: the server is draining and starts no new jobs; it starts once an admin resumes it "
    "(trainyard admin resume)";

}  // namespace

bool JobController::Hold(const spec::CustomJob& job, const executor::GangSpec& gang) {
  {
    std::lock_guard lock(mu_);
    if (!draining_ || cancel_while_submitting_.count(gang.job_id) > 0) return false;
    held_.push_back({job.name, gang});
    submitting_.erase(gang.job_id);
    names_by_id_[gang.job_id] = job.name;
  }
  // The reason, in the job's history and describe (best effort: the job is held either way).
  int64_t steps = 0;
  auto noted = store_->Mutate(job.name, [&](spec::CustomJob& stored) {
    steps = stored.trainyard_info ? stored.trainyard_info->steps_appended : 0;
    if (stored.state != spec::JobState::kQueued)
      return Status(StatusCode::kAborted, "no longer queued");
    spec::RecordStateChange(stored, spec::JobState::kQueued, clock_(), kHeldStep);
    return Status::Ok();
  });
  if (noted.ok()) Announce(*noted, steps);
  return true;
}

void JobController::Unhold(const std::string& id) {
  std::lock_guard lock(mu_);
  std::erase_if(held_, [&id](const HeldJob& h) { return h.gang.job_id == id; });
  std::erase_if(parked_, [&id](const HeldJob& h) { return h.gang.job_id == id; });
}

size_t JobController::SetDraining(bool draining) {
  std::vector<HeldJob> release;
  {
    std::lock_guard lock(mu_);
    draining_ = draining;
    if (!draining) release.swap(held_);
  }
  size_t handed = 0;
  for (const HeldJob& h : release) {
    auto stored = store_->Get(h.name);
    if (!stored.ok() || spec::IsTerminal(stored->state)) continue;
    if (stored->state == spec::JobState::kCancelling) {
      FinishCancelled(h.name, h.gang.job_id);
      continue;
    }
    {
      std::lock_guard lock(mu_);
      submitting_.insert(h.gang.job_id);
    }
    (void)HandOver(*stored, h.gang);
    ++handed;
  }
  return handed;
}

bool JobController::draining() const {
  std::lock_guard lock(mu_);
  return draining_;
}

size_t JobController::held_jobs() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

}  // namespace trainyard::controller
