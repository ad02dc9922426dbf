// Retention: what the server removes once it is old, so a server that runs for months does not
// fill its disk. Ended jobs keep their rows (as on Vertex, a job is listed until deleted); what
// goes is, each after its own time-to-live (0 = kept forever):
//   - the work files of an ended job (<data-dir>/jobs/<id>/ but logs/: replicas' work dirs, the
//     wrapper's and executor's files), `work_dir_ttl` after the job ended;
//   - a job's log, `log_ttl` after the job ended (Cloud Logging's default retention is 30 days),
//     also of a deleted job, whose dir then goes whole (controller/job_files.h);
//   - done long-running operations, `operation_ttl` after they finished;
//   - audit log rows, `audit_ttl` after they were written.
// Also removed: a job dir no job row and no tombstone accounts for (a crash between a delete and
// its files) once it has not changed for an hour. Outputs in buckets are never touched.
//
// Collect() is one pass (`trainyard admin gc`, POST /v1/admin:gc); Start() runs it every
// `interval` on a thread of its own. A store error stops a pass before any job dir is removed
// (a job the pass could not see must not lose its files). Thread-safe: passes are serialized.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "auth/audit_log.h"
#include "common/status.h"
#include "common/time.h"
#include "controller/operation_controller.h"
#include "store/job_store.h"

namespace trainyard::server {

struct RetentionPolicy {
  std::chrono::seconds work_dir_ttl = std::chrono::hours(24 * 7);
  std::chrono::seconds log_ttl = std::chrono::hours(24 * 30);
  std::chrono::seconds operation_ttl = std::chrono::hours(24 * 30);
  std::chrono::seconds audit_ttl = std::chrono::hours(24 * 90);
  std::chrono::seconds interval = std::chrono::hours(1);  // 0 = only on request
};

// Parses a TTL flag: "0" (forever), or a number with s, m, h or d ("30d", "12h"). INVALID_ARGUMENT
// naming `flag` and the accepted forms otherwise.
StatusOr<std::chrono::seconds> ParseTtl(const std::string& flag, const std::string& text);

// What one pass removed (or, with dry_run, would remove).
struct GcReport {
  bool dry_run = false;
  int64_t work_dirs = 0;     // ended jobs whose work files went
  int64_t logs = 0;          // job logs removed (of ended and of deleted jobs)
  int64_t deleted_jobs = 0;  // dirs of deleted jobs removed whole
  int64_t orphans = 0;       // dirs no job accounts for
  uint64_t bytes = 0;        // freed in the jobs dir
  int64_t operations = 0;
  int64_t audit_rows = 0;

  // {"dryRun", "workDirsRemoved", "logsRemoved", "deletedJobDirsRemoved", "orphanDirsRemoved",
  //  "bytesFreed" (a decimal string, as protojson writes int64), "operationsRemoved",
  //  "auditEntriesRemoved"}.
  nlohmann::json ToJson() const;
  std::string Summary() const;  // one line for the server log and the CLI
  bool Empty() const;
  // ToJson's inverse, for the CLI; missing fields read 0.
  static GcReport FromJson(const nlohmann::json& j);
};

struct RetentionParts {
  std::filesystem::path data_dir;                         // for the executors' job-dir registries
  std::filesystem::path jobs_dir;                         // DataDir::jobs_dir()
  std::vector<std::string> registries;                    // executor registry names (gang_record.h)
  store::JobStore* jobs = nullptr;                        // required
  controller::OperationController* operations = nullptr;  // null: operations are kept
  auth::AuditLog* audit = nullptr;                        // null: no audit log
  WallClock clock;                                        // null = the system clock
};

class Retention {
 public:
  Retention(RetentionPolicy policy, RetentionParts parts);
  ~Retention();  // Stop()

  const RetentionPolicy& policy() const { return policy_; }

  // One pass. The first error is returned; what was removed before it stays removed.
  StatusOr<GcReport> Collect(bool dry_run);

  // Runs Collect every policy.interval (not at all when it is 0), telling `on_pass` the outcome
  // of each pass (the server logs those that removed something or failed).
  void Start(std::function<void(const StatusOr<GcReport>&)> on_pass);
  void Stop();

 private:
  Status CollectJobs(TimePoint now, bool dry_run, GcReport* report,
                     std::vector<std::string>* known_ids);
  Status CollectDirs(TimePoint now, bool dry_run, const std::vector<std::string>& known_ids,
                     GcReport* report);

  RetentionPolicy policy_;
  RetentionParts parts_;
  std::mutex pass_mu_;  // one pass at a time
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace trainyard::server
