// SlurmExecutor's submissions that do not complete in Submit: a gang waiting for slurmctld, and
// the resubmission pass (a new attempt after a gang restart, or an attempt whose marker survived
// a crash or an unreachable controller, looked up by name before sbatch runs again).
#include "executor/gang_record.h"
#include "executor/job_dir_layout.h"
#include "executor/run_as.h"
#include "slurm/slurm_executor.h"
#include "slurm/slurm_executor_state.h"
#include "slurm/slurm_script.h"

namespace trainyard::slurm {
using executor::GangSpec;

SlurmTarget SlurmExecutor::TargetFor(const GangSpec& spec) const {
  SlurmTarget server_wide{options_.partition, options_.account, options_.qos, std::nullopt, ""};
  return options_.projects.Resolve(spec.project, spec.service_account, server_wide);
}

Status HandOverAttempt(const GangSpec& spec, const std::filesystem::path& attempt_dir,
                       const executor::RunAs& user) {
  // slurmd opens batch.out there as the user, and the tasks write their rendezvous, status and
  // log files there; plan.json and job.sbatch stay the server's (readable, not writable).
  TY_RETURN_IF_ERROR(executor::MakeReplicaDir(attempt_dir, user));
  TY_RETURN_IF_ERROR(executor::MakeReplicaDir(attempt_dir / "rendezvous", user));
  for (const auto& r : spec.replicas) {
    TY_RETURN_IF_ERROR(executor::MakeReplicaDir(
        executor::ReplicaWorkDir(spec.job_dir, r.pool_index, r.replica_index), user));
    TY_RETURN_IF_ERROR(executor::MakeReplicaDir(
        executor::ReplicaHpMetricFile(spec.job_dir, r.pool_index, r.replica_index).parent_path(),
        user));
  }
  return Status::Ok();
}

bool SlurmControllerUnreachable(const Status& s) {
  if (s.code() == StatusCode::kDeadlineExceeded) return true;
  if (s.code() != StatusCode::kUnavailable) return false;
  for (const char* sign : {"Unable to contact slurm controller", "Socket timed out",
                           "Connection refused", "connect failure", "Zero Bytes were transmitted",
                           "Slurm backup controller in standby mode", "not responding"}) {
    if (s.message().find(sign) != std::string::npos) return true;
  }
  return false;
}

void SlurmExecutor::Accepted(Gang& g, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) SystemLog(g, "warning: " + w);
  Persist(g);
  Notify(g);
  wake_ = true;
  cv_.notify_all();
}

Status SlurmExecutor::AcceptWhileUnreachable(std::unique_ptr<Gang> gang, const Status& why,
                                             const std::vector<std::string>& warnings) {
  const std::string job_id = gang->spec.job_id;
  std::unique_lock<std::mutex> lock(mu_);
  if (gangs_.count(job_id) > 0)
    return AlreadyExistsError("job " + job_id + " was already submitted");
  TY_RETURN_IF_ERROR(
      executor::RegisterJobDir(options_.data_dir, kSlurmRegistry, job_id, gang->spec.job_dir));
  Gang& g = *gang;
  gangs_[job_id] = std::move(gang);
  // The marker stays: RunResubmissions asks Slurm for the job by name (an sbatch that timed out
  // may have queued it after all) and submits it once slurmctld answers.
  WaitForController(g, why);
  Accepted(g, warnings);
  return Status::Ok();
}

void SlurmExecutor::WaitForController(Gang& g, const Status& why) {
  const std::string note =
      "waiting for the Slurm controller: " + why.message() + "; submitting when it answers";
  if (g.waiting_note.empty()) SystemLog(g, note);
  g.waiting_note = note;
  g.submitting = true;
  g.slurm_job_id.clear();
}

std::vector<SlurmExecutor::Resubmission> SlurmExecutor::TakeResubmissions() {
  std::vector<Resubmission> work;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, g] : gangs_) {
    if (g->done || g->in_flight) continue;
    if (g->resubmit_pending && g->resubmit_at && *g->resubmit_at > clock_.Now()) {
      Perform(*g, Lifecycle(*g).Tick(/*any_running=*/false, clock_.Now()));  // a timeout meanwhile
    } else if (g->resubmit_pending) {
      g->resubmit_pending = false;
      g->resubmit_at.reset();
      g->attempt += 1;
      g->slurm_job_id.clear();
      g->slurm_state.clear();
      g->slurm_reason.clear();
      g->missing_polls = 0;
      g->log_cursors.clear();
      g->batch_out_offset = 0;
      for (auto& r : g->replicas) r = {r.pool_index, r.replica_index, 0, std::nullopt, ""};
      g->submitting = true;
      g->in_flight = true;
      Persist(*g);  // the marker, before sbatch (see Submit)
      work.push_back({g->spec, g->attempt, false});
    } else if (g->submitting && g->slurm_job_id.empty()) {
      g->in_flight = true;
      work.push_back({g->spec, g->attempt, true});
    }
  }
  return work;
}

bool SlurmExecutor::LookUpEarlierSubmission(const Resubmission& work,
                                            std::optional<std::string>* found_id) {
  const std::string name = SlurmJobName(work.spec.job_id, work.attempt);
  auto found = client_.FindByName(name);
  if (!found.ok()) {
    // Submitting again could run the job twice: wait until Slurm can be asked.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = gangs_.find(work.spec.job_id);
    if (it == gangs_.end()) return false;
    it->second->in_flight = false;
    if (it->second->slurm_state != "?" && it->second->waiting_note.empty()) {
      SystemLog(*it->second, "cannot ask Slurm whether " + name +
                                 " was submitted before the restart: " + found.status().message() +
                                 " (will keep trying)");
      it->second->slurm_state = "?";
    }
    return false;
  }
  // Several only if someone else submitted under our name too; the newest is ours.
  for (const auto& [id, info] : *found) {
    if (!*found_id || std::stoll(id) > std::stoll(**found_id)) *found_id = id;
  }
  return true;
}

void SlurmExecutor::FinishResubmission(const Resubmission& work,
                                       const std::optional<std::string>& found_id,
                                       const StatusOr<std::string>& slurm_id,
                                       const std::vector<std::string>& warnings) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = gangs_.find(work.spec.job_id);
  if (it == gangs_.end()) return;
  Gang& g = *it->second;
  g.in_flight = false;
  if (g.done) {  // cancelled meanwhile
    if (slurm_id.ok()) pending_cancels_.push_back({*slurm_id, "", g.spec.job_id});
    return;
  }
  if (!slurm_id.ok() && SlurmControllerUnreachable(slurm_id.status())) {
    WaitForController(g, slurm_id.status());  // looked up by name, then submitted, next pass
    Persist(g);
    Notify(g);
    return;
  }
  g.submitting = false;
  if (!slurm_id.ok()) {
    // As in Submit: an sbatch that timed out may still have queued the job.
    if (!found_id) pending_cancels_.push_back({"", "", g.spec.job_id, work.attempt});
    Perform(g, Lifecycle(g).Fail(
                   "could not resubmit the job to Slurm: " + slurm_id.status().message(),
                   executor::GangFailure::kStartFailed, /*any_running=*/false, clock_.Now()));
    return;
  }
  g.slurm_job_id = *slurm_id;
  g.slurm_state.clear();
  g.missing_polls = 0;
  g.waiting_note.clear();
  if (found_id) {
    SystemLog(g, "found Slurm job " + g.slurm_job_id + " (" +
                     SlurmJobName(work.spec.job_id, work.attempt) +
                     ") submitted before the restart; not submitting it again");
  } else {
    SystemLog(g, "submitted to Slurm as job " + g.slurm_job_id + " (attempt " +
                     std::to_string(work.attempt) + DescribeTarget(TargetFor(work.spec)) + ")");
  }
  for (const auto& w : warnings) SystemLog(g, "warning: " + w);
  Persist(g);
  Notify(g);
}

void SlurmExecutor::RunResubmissions() {
  for (const Resubmission& work : TakeResubmissions()) {
    std::optional<std::string> found_id;
    if (work.lookup && !LookUpEarlierSubmission(work, &found_id)) continue;
    std::vector<std::string> warnings;
    StatusOr<std::string> slurm_id = std::string();
    if (found_id) {
      slurm_id = *found_id;
    } else {
      auto script = PrepareAttempt(work.spec, work.attempt, &warnings);
      slurm_id = script.ok() ? client_.Submit(*script) : StatusOr<std::string>(script.status());
    }
    FinishResubmission(work, found_id, slurm_id, warnings);
  }
  RunCancels();
}

}  // namespace trainyard::slurm
