// JobController's deleting and log reading (job_controller.h): what a job leaves in its dir and
// who may still read it (controller/job_files.h).
#include "common/beneath.h"
#include "controller/job_controller.h"
#include "controller/job_files.h"
#include "executor/job_dir_layout.h"
#include "spec/resource_name.h"

namespace trainyard::controller {

using spec::CustomJob;

StatusOr<CustomJob> JobController::Delete(const std::string& name) {
  TY_ASSIGN_OR_RETURN(CustomJob job, store_->Get(name));
  if (!spec::IsTerminal(job.state)) {
    return FailedPreconditionError("The CustomJob \"" + name + "\" is in state " +
                                   std::string(spec::JobStateName(job.state)) +
                                   "; cancel it first and delete it once it has ended.");
  }
  TY_RETURN_IF_ERROR(store_->Delete(name));
  RetireJobDir(job);
  return job;
}

void JobController::RetireJobDir(const CustomJob& job) {
  // Best effort: the job is gone from the API either way, and retention removes what is left
  // (server/retention.h). The work dirs were the replicas', so nothing there is followed.
  auto jobs = BeneathDir::Open(options_.jobs_dir);
  if (!jobs.ok() || !jobs->Stat(job.Id()).ok()) return;
  auto parsed = spec::ResourceName::Parse(job.name, spec::kCustomJobs);
  const TimePoint now = clock_();
  JobTombstone tombstone{job.name, parsed.ok() ? parsed->location.project : "",
                         job.end_time.value_or(job.update_time.value_or(now)), now};
  // The tombstone first: a crash in between leaves a dir retention knows how to age.
  if (!tombstone.project.empty() && WriteTombstone(*jobs, job.Id(), tombstone).ok()) {
    (void)RemoveJobWorkFiles(*jobs, job.Id(), /*dry_run=*/false);
  } else {
    (void)jobs->RemoveAll(job.Id());
  }
}

StatusOr<LogPage> JobController::ReadLogs(const std::string& name, int64_t after, int limit) {
  TY_ASSIGN_OR_RETURN(CustomJob job, store_->Get(name));
  LogPage page;
  page.state = job.state;
  page.next_cursor = after;
  auto lines = executor_->ReadLogs(job.Id(), after, limit);
  if (!lines.ok()) {
    // A job the executor never ran (refused at submit, cancelled while queued) has no logs.
    if (lines.status().code() == StatusCode::kNotFound) return page;
    return lines.status();
  }
  page.lines = std::move(lines).value();
  if (!page.lines.empty()) page.next_cursor = page.lines.back().offset;
  return page;
}

StatusOr<std::vector<executor::LogLine>> JobController::ReadLogsById(const std::string& project,
                                                                     const std::string& id,
                                                                     int64_t after, int limit) {
  auto job = store_->FindInProject(project, id);
  if (!job.ok() && job.status().code() == StatusCode::kNotFound) {
    // A deleted job's log stays readable by its project until log retention ends.
    if (!DeletedJobOf(project, id)) return std::vector<executor::LogLine>{};
  } else {
    TY_RETURN_IF_ERROR(job.status());
  }
  auto lines = executor_->ReadLogs(id, after, limit);
  if (!lines.ok() && lines.status().code() == StatusCode::kNotFound) {
    return std::vector<executor::LogLine>{};
  }
  return lines;
}

bool JobController::DeletedJobOf(const std::string& project, const std::string& id) const {
  // Only a plain id names a job dir: "ID/work/x" would reach into another job's files.
  if (id.empty() || id.find('/') != std::string::npos || id == "." || id == "..") return false;
  auto jobs = BeneathDir::Open(options_.jobs_dir);
  if (!jobs.ok()) return false;
  auto tombstone = ReadTombstone(*jobs, id);
  return tombstone.ok() && tombstone->has_value() && (*tombstone)->project == project;
}

}  // namespace trainyard::controller
