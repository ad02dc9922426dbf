// JobController: the control plane's single writer of job state (spec -> store -> executor).
//
// Create: validate (spec rules, image catalog, Executor::Validate), store the job as
// JOB_STATE_QUEUED (the acknowledgement point: once Create returns OK the job is durable), then
// Executor::Submit. From then on the executor's listener drives the stored state; every change is
// one store transaction. Cancel moves the job to CANCELLING and asks the executor; Delete removes
// a finished job and its directory. Start() re-attaches to what a previous server left: jobs in
// PENDING/RUNNING/CANCELLING are re-adopted (Executor::Adopt), QUEUED ones are submitted again.
//
// States never move backwards: a terminal job is never changed, and CANCELLING only moves to a
// terminal state (google.cloud.aiplatform.v1.JobState rules).
//
// Thread-safety: all methods may be called concurrently (HTTP handler threads, the executor's
// listener thread).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "common/time.h"
#include "controller/replica_users.h"
#include "executor/executor.h"
#include "spec/custom_job.h"
#include "spec/image_catalog.h"
#include "spec/resource_name.h"
#include "store/job_store.h"

namespace trainyard::controller {

// Hourly price in USD of ONE replica with this machine spec (machine + accelerators), or nullopt
// when the catalog does not know it (the cost is then shown as 0).
using PriceFn = std::function<std::optional<double>(const spec::MachineSpec&)>;
using Clock = WallClock;  // common/time.h

struct JobControllerOptions {
  std::filesystem::path jobs_dir;       // GangSpec::job_dir = executor::JobDir(jobs_dir, id)
  std::chrono::seconds kill_grace{30};  // SIGTERM -> SIGKILL on cancel and timeout
  int max_restarts = 3;                 // per job, unless scheduling.disableRetries
  std::chrono::seconds default_timeout{7 * 24 * 3600};  // Vertex's default scheduling.timeout
  // Variables every replica gets unless its containerSpec.env sets them, e.g. the server's
  // STORAGE_EMULATOR_HOST; called per job (the port is known only once the server is bound).
  std::function<std::map<std::string, std::string>()> service_env;
  // Which Unix user a job's replicas run as (replica_users.h); nullptr = the server's own user.
  // Not owned; must outlive the controller.
  const ReplicaUsers* replica_users = nullptr;
  // OK when the bucket of a gs:// baseOutputDirectory exists (the server: CheckBucketExists,
  // common/bucket_path.h: buckets are made only by an explicit create); an error refuses the job
  // at create, as INVALID_ARGUMENT on jobSpec.baseOutputDirectory.outputUriPrefix with its
  // message. nullptr = no check (controllers under test without a bucket root).
  std::function<Status(const std::string& uri)> check_bucket;
  // Called once per job, with the job as stored, when it reaches a terminal state (the server's
  // metrics count it there: observability/server_metrics.h). nullptr = nobody is told.
  std::function<void(const spec::CustomJob& job)> on_job_end;
  // Called for every step added to a job's state history (trainyardInfo.stateHistory: created,
  // each state it enters, each replica restart with its reason), once the step is stored, with
  // the job as stored (the server's log: server/server_log.h). nullptr = nobody is told.
  std::function<void(const spec::CustomJob& job, const spec::StateChange& step)> on_job_step;
};

struct LogPage {
  std::vector<executor::LogLine> lines;
  int64_t next_cursor = -1;  // pass as `after` to continue; unchanged when no new lines
  spec::JobState state = spec::JobState::kUnspecified;
};

class JobController {
 public:
  // `store`, `executor` and `images` must outlive the controller.
  JobController(store::JobStore* store, executor::Executor* executor,
                const spec::ImageCatalog* images, PriceFn prices, JobControllerOptions options,
                Clock clock = nullptr);

  // Registers the executor listener and recovers unfinished jobs. A job that cannot be recovered
  // is marked FAILED with the reason; only store failures make Start fail.
  Status Start();

  // `parent` is "projects/P/locations/L"; `request` is a decoded create request. Returns the
  // stored job (JOB_STATE_QUEUED, or FAILED if the executor refused it after it was stored).
  // INVALID_ARGUMENT with the field path for invalid specs; nothing is stored then.
  // `id`: the job's id, from NewJobId() (for a resource that stores its backing job's name before
  // creating it, so that a restart in between finds the job); empty = a new one. ALREADY_EXISTS
  // if a job of that name exists. Of request.trainyard_info only `creator` is kept (who created
  // the job: spec/creator.h); the rest is the controller's.
  StatusOr<spec::CustomJob> Create(const std::string& parent, spec::CustomJob request,
                                   const std::string& id = "");
  // A fresh job id: numeric like Vertex's, increasing with time so ids sort by creation.
  std::string NewJobId();
  // The checks Create makes before it stores anything (spec rules, image catalog, replica user,
  // Executor::Validate): OK when Create would accept `request` now; stores nothing. For
  // resources that create a job later (a TrainingPipeline's backing job), so that their own
  // create can refuse what the job would.
  Status Validate(const std::string& parent, spec::CustomJob request) const;

  // NOT_FOUND if unknown. Running jobs get a fresh estimated cost.
  StatusOr<spec::CustomJob> Get(const std::string& name);
  StatusOr<store::ListResult> List(const store::ListQuery& query);

  // Best effort and asynchronous, as on Vertex: OK once the job is CANCELLING (or already
  // CANCELLED while queued). FAILED_PRECONDITION if it already ended; NOT_FOUND if unknown.
  // A cancel that arrives while Create is still handing the job to the executor is not lost:
  // Create cancels the gang right after Executor::Submit returns (or does not submit it), and
  // the job ends CANCELLED.
  Status Cancel(const std::string& name);

  // Deletes a job in a terminal state and its work dirs, keeping its log for Cloud Logging until
  // log retention ends (controller/job_files.h); returns the deleted job. FAILED_PRECONDITION
  // while it is not finished (cancel it first).
  StatusOr<spec::CustomJob> Delete(const std::string& name);

  // Log lines after cursor `after` (-1 = from the start), at most `limit`.
  StatusOr<LogPage> ReadLogs(const std::string& name, int64_t after, int limit);
  // The same by project and job id (the last segment of its name), for Cloud Logging queries,
  // which name a job only by resource.labels.job_id. A job of another project, or an id without
  // logs, gives no lines (as Cloud Logging answers a filter that matches nothing). A deleted
  // job's log is read while its dir keeps it (its tombstone names the project).
  StatusOr<std::vector<executor::LogLine>> ReadLogsById(const std::string& project,
                                                        const std::string& id, int64_t after,
                                                        int limit);

  // Draining (job_controller_drain.cc): while on, a created job is stored QUEUED (with a step
  // saying why) but not handed to the executor, and neither is a queued job found at Start;
  // running jobs run on. Turning it off hands every held job to the executor, oldest first,
  // skipping those cancelled meanwhile, and returns how many were handed over. Call before
  // Start to begin drained. Thread-safe.
  size_t SetDraining(bool draining);
  // Jobs created from now on resolve their replica user with `users` (SIGHUP re-read the
  // --service-accounts table); it must outlive the controller, as options.replica_users must.
  void SetReplicaUsers(const ReplicaUsers* users);
  bool draining() const;
  size_t held_jobs() const;

 private:
  StatusOr<executor::GangSpec> BuildGang(const spec::CustomJob& job) const;
  // Delete's work on the job dir: a tombstone, then everything but the log goes.
  void RetireJobDir(const spec::CustomJob& job);
  // Whether `id` is a deleted job of `project` whose log is still kept.
  bool DeletedJobOf(const std::string& project, const std::string& id) const;
  // Executor::Validate, with the job's field paths.
  Status ValidateGang(const executor::GangSpec& gang) const;
  void OnGangStatus(const executor::GangStatus& status);
  // Writes an executor status into the stored job (one transaction), respecting the state rules.
  void ApplyStatus(const std::string& name, const executor::GangStatus& status);
  void MarkFailed(const std::string& name, int code, const std::string& message);
  // Holds a just-stored job instead of handing it over when draining; false when it must be
  // handed over (not draining, or a cancel came meanwhile: HandOver settles that).
  bool Hold(const spec::CustomJob& job, const executor::GangSpec& gang);
  // Drops a held job (cancelled); no-op for others.
  void Unhold(const std::string& id);
  // options_.on_job_step for each step a write added to the job's history (the write began with
  // `steps_before` steps appended: spec::TrainyardInfo::steps_appended).
  void Announce(const spec::CustomJob& job, int64_t steps_before) const;
  // options_.on_job_end for a job just written in a terminal state.
  void Ended(const spec::CustomJob& job) const;
  // Stores a new job (retrying with a fresh id on a collision unless `fixed_id`; `gang` follows
  // the id) and marks it as being submitted.
  Status StoreNew(const spec::LocationName& location, spec::CustomJob& job,
                  executor::GangSpec& gang, bool fixed_id);
  // Submits a stored job's gang, honouring a cancel that came in meanwhile; the job as stored.
  StatusOr<spec::CustomJob> HandOver(const spec::CustomJob& job, const executor::GangSpec& gang);
  // Ends a job the executor has no gang for as CANCELLED.
  void FinishCancelled(const std::string& name, const std::string& id);
  spec::CustomJob Decorate(spec::CustomJob job) const;
  double HourlyCost(const spec::CustomJobSpec& spec) const;

  store::JobStore* store_;
  executor::Executor* executor_;
  const spec::ImageCatalog* images_;
  PriceFn prices_;
  JobControllerOptions options_;
  Clock clock_;
  std::atomic<const ReplicaUsers*> replica_users_;  // options_.replica_users, or a reloaded one

  mutable std::mutex mu_;
  std::map<std::string, std::string> names_by_id_;  // unfinished jobs known to the executor
  // Ids of jobs Create is handing to the executor (from just before the job is stored until
  // Executor::Submit has returned), and those of them a Cancel arrived for meanwhile: the
  // executor cannot cancel a gang it has not got yet, so Create does it (see Cancel).
  std::set<std::string> submitting_;
  std::set<std::string> cancel_while_submitting_;
  uint64_t last_id_ = 0;
  // Draining: jobs stored but held back from the executor, oldest first.
  struct HeldJob {
    std::string name;
    executor::GangSpec gang;
  };
  bool draining_ = false;
  std::vector<HeldJob> held_;
};

}  // namespace trainyard::controller
