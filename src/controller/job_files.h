// What the server keeps of a job's directory (<jobs_dir>/<job_id>, executor/job_dir_layout.h)
// once the job has ended, and the operations retention needs on it. The job's replicas wrote the
// directory, so every call here goes through a BeneathDir (common/beneath.h): links a replica left
// are removed, never followed.
//
// A deleted job: JobController::Delete removes everything but logs/ and writes deleted.json (a
// JobTombstone), so Cloud Logging serves the deleted job's log to its project until log
// retention ends, as Google Cloud keeps log entries after the job is gone. Retention
// (server/retention.h) then removes the whole directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/beneath.h"
#include "common/status.h"
#include "common/time.h"

namespace trainyard::controller {

struct JobTombstone {
  std::string name;     // projects/P/locations/L/customJobs/ID
  std::string project;  // P: the only project that may read the logs
  TimePoint end_time;   // when the job ended: log retention counts from here
  TimePoint delete_time;
};

// deleted.json of job `id` under `jobs` (the jobs dir), written durably (temp + rename + fsync).
Status WriteTombstone(const BeneathDir& jobs, const std::string& id, const JobTombstone& tombstone);
// The job's tombstone, nullopt when it has none (a job not deleted). DATA_LOSS naming the file
// when it does not parse; NOT_FOUND when there is no directory for `id`.
StatusOr<std::optional<JobTombstone>> ReadTombstone(const BeneathDir& jobs, const std::string& id);

// Space taken by `rel` beneath `dir` and everything under it (st_blocks, links not followed);
// 0 when it does not exist. Best effort: unreadable parts count 0.
uint64_t TreeBytes(const BeneathDir& dir, const std::string& rel);

// What removing (part of) a job dir freed, or would free.
struct Removed {
  int64_t entries = 0;  // top-level entries of the job dir removed
  uint64_t bytes = 0;
};

// Removes every entry of <jobs>/<id> except logs/ and deleted.json (work dirs, replica and
// executor files); with `dry_run` only measures them. NOT_FOUND when there is no such dir.
StatusOr<Removed> RemoveJobWorkFiles(const BeneathDir& jobs, const std::string& id, bool dry_run);

}  // namespace trainyard::controller
