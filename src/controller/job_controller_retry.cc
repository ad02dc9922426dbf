// JobController's retry pass (job_controller.h: RetryPendingWrites): what a full or read-only
// disk kept from being written is written on a later pass, once there is room, without a restart.
// An acknowledged job is stored, so it is never failed for lack of room: its state write waits
// here, or its hand-over to the executor does.
#include <algorithm>

#include "common/disk_fault.h"
#include "controller/job_controller.h"

namespace trainyard::controller {

void JobController::KeepIfFailed(const Status& written, PendingWrite write) {
  // Called under write_mu_. The job's latest write replaces an older one: each write carries the
  // whole state the executor reported, so only the newest matters.
  const std::string id(spec::LastSegment(write.name));
  if (written.ok()) {
    pending_writes_.erase(id);
  } else {
    pending_writes_.insert_or_assign(id, std::move(write));
  }
}

void JobController::Park(const spec::CustomJob& job, const executor::GangSpec& gang,
                         const Status& why) {
  bool first = false;
  {
    std::lock_guard lock(mu_);
    names_by_id_[gang.job_id] = job.name;
    submitting_.erase(gang.job_id);
    if (std::none_of(parked_.begin(), parked_.end(),
                     [&](const HeldJob& h) { return h.gang.job_id == gang.job_id; })) {
      parked_.push_back({job.name, gang});
      first = true;
    }
  }
  if (!first) return;
  // The reason in the job's history, once (best effort: there is seldom room for it now).
  int64_t steps = 0;
  auto noted = store_->Mutate(job.name, [&](spec::CustomJob& stored) {
    steps = stored.trainyard_info ? stored.trainyard_info->steps_appended : 0;
    if (stored.state != spec::JobState::kQueued) {
      return Status(StatusCode::kAborted, "no longer queued");
    }
    // In the data dir's words: the executor's error names server paths.
    const DiskFault fault = DiskFaultOf(why, options_.jobs_dir);
    spec::RecordStateChange(
        stored, spec::JobState::kQueued, clock_(),
        "waiting for room to start: " +
            (fault == DiskFault::kNone
                 ? std::string("the executor has no room for it")
                 : DiskFaultCondition(fault, kDataDirPlace, options_.jobs_dir)));
    return Status::Ok();
  });
  if (noted.ok()) Announce(*noted, steps);
}

size_t JobController::RetryPendingWrites() {
  {
    std::lock_guard write_lock(write_mu_);
    std::map<std::string, PendingWrite> pending;
    pending.swap(pending_writes_);
    for (auto& [id, write] : pending) {
      Status s = write.status
                     ? WriteStatus(write.name, *write.status)
                     : WriteFailure(write.name, write.failure->first, write.failure->second);
      if (!s.ok()) pending_writes_.emplace(id, std::move(write));
    }
  }
  std::vector<HeldJob> parked;
  {
    std::lock_guard lock(mu_);
    // Paused ones wait for the resume as well.
    for (auto it = parked_.begin(); it != parked_.end();) {
      if (!PauseOf(it->gang.project).empty()) {
        ++it;
        continue;
      }
      parked.push_back(std::move(*it));
      it = parked_.erase(it);
    }
  }
  for (const HeldJob& h : parked) {
    auto stored = store_->Get(h.name);
    if (!stored.ok() && stored.status().code() == StatusCode::kNotFound) continue;
    if (!stored.ok()) {
      std::lock_guard lock(mu_);
      parked_.push_back(h);
      continue;
    }
    if (spec::IsTerminal(stored->state)) continue;
    if (stored->state == spec::JobState::kCancelling) {
      FinishCancelled(h.name, h.gang.job_id);
      continue;
    }
    {
      std::lock_guard lock(mu_);
      submitting_.insert(h.gang.job_id);
    }
    (void)HandOver(*stored, h.gang);  // parks it again while there is no room
  }
  std::lock_guard write_lock(write_mu_);
  std::lock_guard lock(mu_);
  return pending_writes_.size() + parked_.size();
}

}  // namespace trainyard::controller
