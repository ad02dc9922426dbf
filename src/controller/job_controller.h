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
#include "controller/pause_book.h"
#include "controller/project_quota.h"
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
  // Per-project quotas (project_quota.h); nullptr = none. Not owned; must outlive the controller.
  // After changing one, call QuotasChanged().
  const QuotaBook* quotas = nullptr;
};

// What a project's jobs hold now (handed to the executor, not ended) and how many wait held.
struct ProjectUse {
  ResourceAmount used;
  int held_jobs = 0;
  std::optional<TimePoint> paused_since;  // set while an admin has the project paused
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
  // The image catalog jobs are resolved with.
  const spec::ImageCatalog* images() const { return images_; }
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

  // Admission (job_controller_admission.cc). A job is handed to the executor at once unless it
  // is *held*: stored QUEUED, with a step in its state history saying why, and not yet given to
  // the executor (nor is a queued job found at Start). Held jobs are handed over, highest
  // priority first (spec/job_priority.h) and then oldest first, as soon as nothing holds them;
  // within a project a held job that does not fit keeps the project's later ones waiting (so a
  // big job is not starved by small ones). A held job whose scheduling.maxWaitDuration has passed
  // since its create fails with RESOURCE_EXHAUSTED, and so does a job the executor still has
  // queued then (the local executor waiting for room on the host, Slurm's queue): Tick fails it
  // and cancels its gang. Cancelling a held job ends it CANCELLED.
  //
  // Two things hold a job:
  //   - a pause (pause_book.h) of the server (draining) or of the job's project: while on, every
  //     new job it covers is held, and so are those already held; running jobs run on.
  //     SetPaused(scope, since) pauses `scope` (kServerScope or a project id), SetPaused(scope,
  //     nullopt) resumes it: that releases the held jobs it covered (those over quota or under
  //     another pause stay held) and returns how many were handed over (0 when another thread
  //     is releasing at the time: it hands them over). A pause of an already paused scope keeps
  //     its first time. Call before Start to begin paused. The executor is told too
  //     (Executor::SetPaused): the local one starts none of the scope's gangs it has queued, and
  //     those jobs get the same step; gangs it started run on.
  //   - its project's quota (options.quotas): a job that does not fit in what its project has
  //     free waits ("held: project teama is using 8 of its 8 vCPUs quota ..."). A job larger
  //     than the whole quota is refused at Create and Validate with RESOURCE_EXHAUSTED.
  // All thread-safe.
  size_t SetPaused(const std::string& scope, std::optional<TimePoint> since);
  // SetPaused(kServerScope, now or nullopt).
  size_t SetDraining(bool draining);
  // Re-reads options.quotas for held jobs (an admin changed one); returns how many started.
  size_t QuotasChanged();
  // Expires held jobs and jobs queued in the executor past their maxWaitDuration; the server
  // calls it every few seconds.
  void Tick();
  // Per project: what its admitted jobs hold and how many are held (projects with neither are
  // absent).
  std::map<std::string, ProjectUse> ProjectUses() const;
  // Jobs created from now on resolve their replica user with `users` (SIGHUP re-read the
  // --service-accounts table); it must outlive the controller, as options.replica_users must.
  void SetReplicaUsers(const ReplicaUsers* users);
  bool draining() const;
  // The paused projects (not the server) and since when.
  std::map<std::string, TimePoint> paused_projects() const;
  size_t held_jobs() const;

  // The controller's next pass over what a full or read-only disk kept from being written
  // (job_controller_retry.cc; the server runs it every second): the latest executor status of
  // each job whose state write failed, a failure that could not be recorded, and the hand-over
  // of each job the executor could not take for lack of room (stored QUEUED, so acknowledged:
  // it is never failed for that, it waits). Whatever fails again is kept for the next pass.
  // Returns how many writes and hand-overs are still pending. Thread-safe.
  size_t RetryPendingWrites();

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
  // A write that fails (a full disk) is kept, as the job's latest pending write, for
  // RetryPendingWrites.
  void ApplyStatus(const std::string& name, const executor::GangStatus& status);
  void MarkFailed(const std::string& name, int code, const std::string& message);
  // The writes themselves: OK also when there is nothing to write (ended already) or the job is
  // gone; an error means the write must be tried again.
  Status WriteStatus(const std::string& name, const executor::GangStatus& status);
  Status WriteFailure(const std::string& name, int code, const std::string& message);
  // Keeps `write` as the job's pending write when `written` failed, drops it when it succeeded.
  struct PendingWrite;
  void KeepIfFailed(const Status& written, PendingWrite write);
  // A stored job the executor could not take for lack of room: kept QUEUED for the next pass.
  void Park(const spec::CustomJob& job, const executor::GangSpec& gang, const Status& why);
  // Holds a just-stored job (paused, or over its project's quota) and notes why; false when
  // it must be handed over now (it then counts against its project's quota), or when a cancel
  // came meanwhile (HandOver settles that).
  bool Hold(const spec::CustomJob& job, const executor::GangSpec& gang);
  // Drops a held job (cancelled); no-op for others.
  void Unhold(const std::string& id);
  // What a job counts against its project's quota (project_quota.h).
  static ResourceAmount DemandOf(const spec::CustomJob& job);
  // RESOURCE_EXHAUSTED when the job alone is larger than its project's quota.
  Status CheckQuota(const std::string& project, const spec::CustomJob& job) const;
  // Counts a job handed to the executor against its project (mu_ held); Unadmit undoes it when
  // it ends (false if it was not counted).
  // `wait_deadline`: when the job fails if the executor has not started it by then.
  void Admit(const std::string& id, const std::string& project, const ResourceAmount& demand,
             std::optional<TimePoint> wait_deadline);
  bool Unadmit(const std::string& id);
  // A job left the executor: frees its quota and lets held jobs start.
  void Finished(const std::string& id);
  // Hands over every held job that may start now and fails those past their maxWaitDuration;
  // how many were handed over.
  size_t Release();
  struct HeldJob;
  // Release's choice, under mu_: the jobs to hand over (counted already), those expired, and
  // new reasons to note (job name, reason).
  std::vector<HeldJob> TakeReleasable(std::vector<HeldJob>* expired,
                                      std::vector<std::pair<std::string, std::string>>* notes);
  bool HandOverReleased(const HeldJob& h);
  void ExpireHeld(const HeldJob& h);
  // Fails (and cancels) each admitted job the executor still has queued past its deadline.
  void ExpireQueued();
  // create time + scheduling.maxWaitDuration; nullopt without one (or with 0: no limit).
  static std::optional<TimePoint> WaitDeadline(const spec::CustomJob& job);
  void NoteHeld(const std::string& name, const std::string& reason);
  // Why a job of `project` is held by a pause now (pause_book.h's wording), "" when no pause
  // covers it; mu_ held.
  std::string PauseOf(const std::string& project) const;
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
  // Jobs stored but held back from the executor (Hold), in the order they were held.
  struct HeldJob {
    std::string name;
    executor::GangSpec gang;
    ResourceAmount demand;
    std::string noted;                             // the reason last written to its history
    std::optional<spec::Timestamp> wait_deadline;  // create time + scheduling.maxWaitDuration
  };
  // Paused scopes (kServerScope: draining) and since when.
  std::map<std::string, TimePoint> paused_;
  std::vector<HeldJob> held_;
  // Jobs the executor could not take for lack of room (Park), oldest first; guarded by mu_.
  std::vector<HeldJob> parked_;

  // A job-state write that failed, to retry: an executor status, or a failure to record.
  struct PendingWrite {
    std::string name;
    std::optional<executor::GangStatus> status;
    std::optional<std::pair<int, std::string>> failure;  // code, message
  };
  // Serializes job-state writes from the listener, handlers and the retry pass, so a retried
  // status never overtakes a newer one. Taken before mu_, never while holding it.
  std::mutex write_mu_;
  std::map<std::string, PendingWrite> pending_writes_;  // by job id; guarded by write_mu_
  bool releasing_ = false;                              // a thread runs Release()
  bool release_again_ = false;                          // ... and must look once more when done
  // Jobs handed to the executor and not ended, with what they count against their project.
  struct Admitted {
    std::string project;
    ResourceAmount demand;
    // Until the executor starts it (then reset): create time + scheduling.maxWaitDuration.
    std::optional<TimePoint> wait_deadline;
  };
  std::map<std::string, Admitted> admitted_;
  std::map<std::string, ResourceAmount> used_;  // by project: the sum of admitted_
};

}  // namespace trainyard::controller
