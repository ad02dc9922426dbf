// LocalExecutor: starting, watching, restarting, stopping and re-adopting gangs. What happens next
// is decided by the gang's GangLifecycle (gang_lifecycle.h); this file reports events to it and
// performs its actions through the ReplicaRuntime. Every function here runs with mu_ held (from
// Tick in a PollOnce pass, or Submit/Cancel/Adopt).
#include <signal.h>

#include <algorithm>
#include <cstdio>

#include "common/bucket_path.h"
#include "common/disk_fault.h"
#include "common/file_util.h"
#include "executor/job_log.h"
#include "executor/package_index.h"
#include "executor/replica_env.h"
#include "executor/run_as.h"
#include "executor/tcp_port.h"
#include "local_executor/host_inventory.h"
#include "local_executor/local_executor.h"
#include "local_executor/local_executor_state.h"
#include "replica_contract/replica_contract.h"

namespace trainyard::executor {
namespace fs = std::filesystem;

namespace {

std::string Describe(const LocalExecutor::Replica& r) {
  return replica_contract::ReplicaDescription(r.pool_index, r.replica_index);
}

bool AnyRunning(const LocalExecutor::Gang& g) {
  return std::any_of(g.replicas.begin(), g.replicas.end(),
                     [](const LocalExecutor::Replica& r) { return r.running; });
}

// Not stopping and not ended: replicas may still be (re)started.
bool Active(const LocalExecutor::Gang& g) {
  return g.stop_goal == StopGoal::kNone && !GangLifecycle::IsTerminal(g.state);
}

}  // namespace

GangStatus LocalExecutor::StatusOf(const Gang& gang) const { return StatusFromGang(gang); }

GangLifecycle LocalExecutor::Lifecycle(Gang& gang) const {
  return GangLifecycle(&gang, LifecyclePolicy::From(gang.spec, options_.restart_backoff));
}

void LocalExecutor::Persist(const Gang& gang, bool durable) {
  // A durable write is a plain replace now plus fsyncs that sync_thread_ does outside mu_, so
  // ~10 ms of fsync never blocks Submit/Get or other gangs.
  Status s = SaveGangState(gang, /*durable=*/false);
  if (!s.ok()) {
    // Said once per outage (the job log most likely cannot take it either); Tick retries.
    if (!gang.state_unsaved) {
      SystemLog(gang, nullptr, "cannot persist executor state: " + s.ToString());
    }
    gang.state_unsaved = true;
    return;
  }
  gang.state_unsaved = false;
  if (durable) {
    std::lock_guard<std::mutex> lock(sync_mu_);
    pending_fsyncs_.push_back(LocalStateFile(gang.spec.job_dir));
    pending_fsyncs_.push_back(gang.spec.job_dir);
    sync_cv_.notify_one();
  }
}

void LocalExecutor::Notify(const Gang& gang) { pending_notifications_.push_back(StatusOf(gang)); }

void LocalExecutor::SystemLog(const Gang& gang, const Replica* replica, const std::string& text) {
  LogRecord rec;
  rec.time = clock_.Now();
  rec.pool_index = replica ? replica->pool_index : gang.replicas.front().pool_index;
  rec.replica_index = replica ? replica->replica_index : gang.replicas.front().replica_index;
  rec.is_stderr = true;
  rec.text = "[trainyard] " + text;
  AppendSystemLines(gang, {std::move(rec)});
}

void LocalExecutor::SayLostLogLines(const Gang& gang) {
  if (gang.lost_log_lines > 0) AppendSystemLines(gang, {});
}

void LocalExecutor::AppendSystemLines(const Gang& gang, std::vector<LogRecord> lines) {
  if (gang.lost_log_lines > 0) {
    LogRecord note;
    note.time = clock_.Now();
    note.pool_index = gang.replicas.front().pool_index;
    note.replica_index = gang.replicas.front().replica_index;
    note.is_stderr = true;
    note.text = "[trainyard] " + std::to_string(gang.lost_log_lines) +
                " log lines were lost: " + gang.lost_log_reason;
    lines.insert(lines.begin(), std::move(note));
  }
  if (lines.empty()) return;
  // A log that cannot be written must not stop the job: its lines are counted instead.
  const fs::path log_dir = JobLogDir(gang.spec.job_dir);
  const Status s = AppendJobLog(log_dir, options_.log_limits, lines);
  const int64_t new_lines = static_cast<int64_t>(lines.size()) - (gang.lost_log_lines > 0);
  if (s.ok()) {
    gang.lost_log_lines = 0;
  } else if (new_lines > 0) {
    gang.lost_log_lines += new_lines;
    const DiskFault fault = DiskFaultOf(s, log_dir);
    gang.lost_log_reason = fault == DiskFault::kNone ? "the job log could not be written"
                                                     : std::string(DiskFaultReason(fault));
  }
}

ReplicaRuntime& LocalExecutor::RuntimeOf(const Gang& gang, const Replica& r) const {
  for (const auto& spec : gang.spec.replicas) {
    if (spec.pool_index == r.pool_index && spec.replica_index == r.replica_index) {
      // Validate refused image replicas without a container runtime before they were queued.
      if (!spec.image.empty() && options_.container_runtime) return *options_.container_runtime;
      break;
    }
  }
  return runtime_;
}

void LocalExecutor::WatchExit(ReplicaRuntime& runtime, const ReplicaHandle& handle) {
  auto fd = runtime.OpenExitFd(handle);
  if (fd.ok()) {
    if (exit_watcher_->Add(*fd)) return;
  } else if (fd.status().code() == StatusCode::kNotFound) {
    wake_ = true;  // already gone: look at it on the next loop iteration, not the next tick
    return;
  }
  // Not watchable: the poll every poll_interval notices the exit.
}

void LocalExecutor::ReleaseLimits(const Gang& gang, Replica& r, bool ended_now) {
  if (r.cgroups.empty()) return;
  if (ended_now && r.exit_code) {
    const CgroupMemoryReport m = CgroupLimits::ReadMemory(r.cgroups.front());
    if (m.OomKilled(*r.exit_code)) {
      const ReplicaSpec& spec = gang.spec.replicas[&r - gang.replicas.data()];
      r.oom_note = OomMessage(Describe(r), m, spec.machine_type);
      // The failure message itself is logged when the gang handles the exit (AdvanceGang).
      SystemLog(gang, &r,
                "out-of-memory kill recorded in " + r.cgroups.front().string() + ": oom_kill=" +
                    std::to_string(m.oom_kills) + ", failcnt=" + std::to_string(m.failcnt) +
                    ", peak " + FormatBytes(m.peak_bytes) + " of " + FormatBytes(m.limit_bytes));
    }
  }
  if (CgroupLimits::Remove(r.cgroups)) r.cgroups.clear();
}

bool LocalExecutor::RoomToStart(Gang& gang) {
  for (const Replica& r : gang.replicas) {
    const fs::path work = ReplicaWorkDir(gang.spec.job_dir, r.pool_index, r.replica_index);
    const Status made = MakeReplicaDir(work, gang.spec.run_as);
    if (made.ok()) continue;
    if (!IsDiskFault(made)) break;  // LaunchReplica fails the gang with it, as for any start error
    // Back to the queue (its resources free for others meanwhile); a later pass tries again.
    scheduler_.Remove(gang.spec.job_id);
    (void)scheduler_.Enqueue(gang.spec.job_id, gang.demands,
                             GangClass{gang.spec.project, gang.spec.priority});
    const std::string note =
        "waiting for room to start: " +
        DiskFaultCondition(DiskFaultOf(made, work.parent_path()), kDataDirPlace, work);
    if (note != gang.waiting_note) {
      gang.waiting_note = note;
      SystemLog(gang, nullptr, note);
      Notify(gang);
    }
    return false;
  }
  gang.waiting_note.clear();
  return true;
}

void LocalExecutor::StartGang(Gang& gang, const Admission& admission) {
  if (!RoomToStart(gang)) return;
  Lifecycle(gang).Placed(GangState::kPending, clock_.Now());
  Notify(gang);
  for (const auto& w : inventory_warnings_) SystemLog(gang, nullptr, "host inventory: " + w);
  for (const auto& w : gang.warnings) SystemLog(gang, nullptr, "warning: " + w);
  for (size_t i = 0; i < gang.replicas.size(); ++i) {
    Replica& r = gang.replicas[i];
    r.gpus = i < admission.gpus.size() ? admission.gpus[i] : std::vector<int>{};
    r.cpus = i < admission.cpus.size() ? admission.cpus[i] : std::vector<int>{};
    int port = 0;
    for (int attempt = 0; attempt < 20 && port == 0; ++attempt) {
      auto picked = PickFreeTcpPort(options_.host);
      if (picked.ok() && ports_in_use_.insert(*picked).second) port = *picked;
    }
    r.port = port;
    if (port == 0) {
      Perform(gang, Lifecycle(gang).Fail(
                        Describe(r) + " could not be given a free TCP port on " + options_.host,
                        GangFailure::kStartFailed, /*any_running=*/false, clock_.Now()));
      return;
    }
    const ReplicaSpec& spec = gang.spec.replicas[i];
    if (!spec.accelerator_type.empty() && !r.gpus.empty()) {
      for (int g : r.gpus) {
        auto it = std::find_if(inventory_.gpus.begin(), inventory_.gpus.end(),
                               [&](const GpuDevice& d) { return d.index == g; });
        if (it != inventory_.gpus.end()) {
          SystemLog(gang, &r,
                    "GPU " + std::to_string(g) + " (" + it->name + ") serves the " +
                        spec.accelerator_type + " this replica asked for");
        }
      }
    }
  }
  for (auto& r : gang.replicas) {
    LaunchReplica(gang, r);
    if (!Active(gang)) return;  // a launch failed; the gang is stopping
  }
  Lifecycle(gang).Placed(GangState::kRunning, clock_.Now());
  Persist(gang);
  Notify(gang);
}

ReplicaEnvInput LocalExecutor::EnvInputOf(const Gang& gang, const Replica& r) const {
  const GangSpec& spec = gang.spec;
  ReplicaEnvInput in;
  in.job_id = spec.job_id;
  in.job_spec_json = spec.job_spec_json;
  in.tf_config_primary_role = spec.tf_config_primary_role;
  in.base_output_dir = spec.base_output_dir;
  if (auto it = spec.extra_env.find("CLOUD_ML_TRIAL_ID"); it != spec.extra_env.end()) {
    in.trial_id = it->second;
  }
  // Members in pool, then index order (the order ranks are assigned in).
  std::vector<const Replica*> ordered;
  for (const auto& other : gang.replicas) ordered.push_back(&other);
  std::sort(ordered.begin(), ordered.end(), [](const Replica* a, const Replica* b) {
    return std::tie(a->pool_index, a->replica_index) < std::tie(b->pool_index, b->replica_index);
  });
  for (size_t i = 0; i < ordered.size(); ++i) {
    if (ordered[i] == &r) in.self = i;
    in.members.push_back({ordered[i]->pool_index, ordered[i]->replica_index,
                          options_.host + ":" + std::to_string(ordered[i]->port)});
  }
  in.gpus = r.gpus;
  in.hp_metric_file = ReplicaHpMetricFile(spec.job_dir, r.pool_index, r.replica_index);
  in.cpu_threads = static_cast<int>(r.cpus.size());
  return in;
}

namespace {

// One attempt's cgroup name: unique per attempt, so a re-adopting server finds it again.
std::string AttemptCgroupName(const GangSpec& spec, int pool, int replica, int attempt) {
  return "trainyard-" + spec.job_id + "-" + TaskName(pool, replica) + "-" + std::to_string(attempt);
}

}  // namespace

void LocalExecutor::LimitWithCgroup(Gang& gang, Replica& r, ReplicaLaunch* launch) {
  const size_t i = &r - gang.replicas.data();
  // Like a container (PrepareContainerLaunch), an oversized replica gets the whole host.
  auto cgroup = cgroups_.Create(
      AttemptCgroupName(gang.spec, r.pool_index, r.replica_index, r.attempt),
      std::min(gang.demands[i].memory_gib, inventory_.memory_gib), gang.demands[i].cpus);
  if (cgroup.ok()) {
    r.cgroups = *cgroup;
    launch->cgroup = r.cgroups.front();
    launch->extra_cgroups.assign(r.cgroups.begin() + 1, r.cgroups.end());
  } else {
    SystemLog(gang, &r, "runs without memory/CPU limits: " + cgroup.status().message());
  }
}

void LocalExecutor::ReadoptLimits(Gang& gang, Replica& r) {
  if (!cgroups_.enabled()) return;
  const size_t i = &r - gang.replicas.data();
  Status s =
      cgroups_.Reapply(AttemptCgroupName(gang.spec, r.pool_index, r.replica_index, r.attempt),
                       std::min(gang.demands[i].memory_gib, inventory_.memory_gib),
                       gang.demands[i].cpus, &r.cgroups);
  if (!s.ok()) SystemLog(gang, &r, "memory/CPU limits not restored: " + s.message());
}

void LocalExecutor::LaunchReplica(Gang& gang, Replica& r) {
  const GangSpec& spec = gang.spec;
  const ReplicaEnvInput in = EnvInputOf(gang, r);
  const ReplicaSpec& rspec =
      *std::find_if(spec.replicas.begin(), spec.replicas.end(), [&](const ReplicaSpec& s) {
        return s.pool_index == r.pool_index && s.replica_index == r.replica_index;
      });
  const bool in_container = !rspec.image.empty();
  // A container gets the Vertex and user variables only: the server's PATH or HOME would break
  // the image. TRAINYARD_BUCKET_ROOT becomes /gcs inside (the runtime mounts the bucket root); a
  // host process gets the server's, so gs:// paths resolve where the server made the output dirs
  // (a replica user's own default would be under its $HOME).
  EnvMap inherited = in_container ? EnvMap{} : InheritedReplicaEnv();
  inherited["TRAINYARD_BUCKET_ROOT"] = fs::absolute(BucketRoot()).string();
  if (!in_container) ApplyIdentityEnv(spec.run_as, &inherited);

  r.attempt += 1;
  r.running = true;
  r.done = false;
  r.exit_code.reset();
  r.end_time.reset();
  r.restart_at.reset();
  r.restart_note.clear();
  r.lost_reason.clear();
  r.oom_note.clear();
  r.lost_failure = GangFailure::kReplicaLost;
  r.handle = {};
  ReplicaLaunch launch;
  launch.pool_index = r.pool_index;
  launch.replica_index = r.replica_index;
  launch.argv = rspec.argv;
  launch.work_dir = ReplicaWorkDir(spec.job_dir, r.pool_index, r.replica_index);
  launch.log_dir = JobLogDir(spec.job_dir);
  launch.log_limits = options_.log_limits;
  launch.pid_file =
      ReplicaAttemptFile(spec.job_dir, r.pool_index, r.replica_index, r.attempt, "pid");
  launch.status_file =
      ReplicaAttemptFile(spec.job_dir, r.pool_index, r.replica_index, r.attempt, "status");
  launch.output_file =
      ReplicaAttemptFile(spec.job_dir, r.pool_index, r.replica_index, r.attempt, "wrapper.log");
  launch.hp_metric_file = in.hp_metric_file;
  launch.run_as = spec.run_as;
  launch.supervisor_cgroups = cgroups_.supervisor_cgroups();
  if (in_container) PrepareContainerLaunch(gang, r, rspec, &launch);
  GivePackageIndex(gang, in_container, &inherited, &launch);
  launch.env = BuildReplicaEnv(inherited, rspec.env, in, spec.extra_env);
  if (pin_cpus_ && !in_container) launch.cpus = r.cpus;
  Status dirs = PrepareReplicaDirs(launch.work_dir, in, spec.run_as);
  if (dirs.ok() && spec.run_as) dirs = HideJobFiles(spec.job_dir, launch.log_dir);
  if (CgroupLimits::Remove(r.cgroups)) r.cgroups.clear();  // the last attempt's
  // A container gets its limits from the container runtime (podman --cpus/--memory).
  if (cgroups_.enabled() && dirs.ok() && !in_container) LimitWithCgroup(gang, r, &launch);
  ReplicaRuntime& runtime = RuntimeOf(gang, r);
  StatusOr<ReplicaHandle> started = dirs.ok() ? runtime.Start(launch) : dirs;
  if (!started.ok()) {
    r.running = false;
    r.done = true;
    r.lost_reason = "could not be started: " + started.status().message();
    SystemLog(gang, &r, Describe(r) + " " + r.lost_reason);
    Perform(gang, Lifecycle(gang).Fail(Describe(r) + " " + r.lost_reason, GangFailure::kStartFailed,
                                       AnyRunning(gang), clock_.Now()));
    return;
  }
  r.handle = *started;
  unreaped_.push_back({&runtime, r.handle});
  WatchExit(runtime, r.handle);
  if (r.attempt > 1) {
    SystemLog(gang, &r,
              "starting " + Describe(r) + " again (attempt " + std::to_string(r.attempt) + ")");
  }
  Persist(gang);
}

void LocalExecutor::GivePackageIndex(const Gang& gang, bool in_container, EnvMap* inherited,
                                     ReplicaLaunch* launch) const {
  if (in_container) {
    PackageIndexAccess access = HostPackageIndexAccess(CurrentEnvironment());
    for (auto& [key, value] : access.env) (*inherited)[key] = std::move(value);
    for (const auto& p : access.read_only) launch->read_only_mounts.push_back(p.string());
  }
  if (options_.data_dir.empty()) return;
  auto cache =
      ProjectPipCache(options_.data_dir / "pip-cache", gang.spec.job_name, gang.spec.run_as);
  // Without a cache pip still installs (--no-cache-dir); a host replica of another user may not
  // reach the data dir, which a container's mount does not need.
  if (!cache.ok()) return;
  if (!in_container && gang.spec.run_as && !CheckCanReach(*cache, *gang.spec.run_as).ok()) return;
  (*inherited)["PIP_CACHE_DIR"] = cache->string();
  if (in_container) launch->mounts.push_back(cache->string());
}

void LocalExecutor::PrepareContainerLaunch(const Gang& gang, const Replica& r,
                                           const ReplicaSpec& rspec, ReplicaLaunch* launch) const {
  launch->job_id = gang.spec.job_id;
  launch->image = rspec.image;
  launch->image_field = rspec.image_field;
  launch->command = rspec.command;
  launch->args = rspec.args;
  launch->mounts = rspec.mounts;
  launch->gpus = r.gpus;
  const ReplicaDemand& d = gang.demands[&r - gang.replicas.data()];
  // podman refuses limits above the host (--cpus 4 on 2 CPUs); an oversized replica takes all.
  launch->cpu_limit = std::min(d.cpus, static_cast<double>(inventory_.cpus));
  launch->memory_bytes =
      static_cast<int64_t>(std::min(d.memory_gib, inventory_.memory_gib) * (1LL << 30));
}

void LocalExecutor::PollReplica(Gang& gang, Replica& r) {
  if (!r.running) return;
  bool had_pid = r.handle.process.valid();
  ReplicaObservation seen = RuntimeOf(gang, r).Observe(&r.handle);
  if (seen.phase == ReplicaObservation::Phase::kRunning) {
    if (!had_pid && r.handle.process.valid()) Persist(gang);
    return;
  }
  r.running = false;
  if (seen.phase == ReplicaObservation::Phase::kLost) {
    r.lost_reason = seen.lost_reason;
    r.lost_failure = seen.failure;
  } else {
    r.exit_code = seen.exit_code;
    r.end_time = seen.end_time;
  }
  ReleaseLimits(gang, r, /*ended_now=*/true);
  Persist(gang);
  if (seen.phase == ReplicaObservation::Phase::kExited) Notify(gang);
}

void LocalExecutor::AdvanceGang(Gang& gang) {
  auto now = clock_.Now();
  GangLifecycle lc = Lifecycle(gang);
  if (lc.queued() || lc.terminal()) return;
  if (lc.stopping()) return Perform(gang, lc.Tick(AnyRunning(gang), now));
  // Exits not yet taken in (e.g. of replicas that ended while the server was down) come before
  // the deadline: a job that succeeded before its timeout passed succeeded. One that restarts
  // meets the deadline on the next tick.
  const bool exits_pending = std::any_of(gang.replicas.begin(), gang.replicas.end(),
                                         [](const Replica& r) { return !r.running && !r.done; });
  if (!exits_pending) {
    if (LifecycleAction timeout = lc.Tick(AnyRunning(gang), now);
        timeout.kind != LifecycleAction::Kind::kNone) {
      return Perform(gang, timeout);
    }
  }
  StartDueRestarts(gang);
  if (!Active(gang)) return;
  for (auto& r : gang.replicas) {
    if (r.running || r.done) continue;
    r.done = true;
    if (!r.lost_reason.empty()) {
      return Perform(
          gang, lc.Fail(Describe(r) + " " + r.lost_reason, r.lost_failure, AnyRunning(gang), now));
    }
    int code = r.exit_code.value_or(-1);
    // Read before this note joins the replica's stderr lines.
    const std::string reason =
        code == 0 ? ""
                  : LastStderrLine(JobLogDir(gang.spec.job_dir), r.pool_index, r.replica_index);
    // An OOM kill says more than the exit code and whatever the replica printed last.
    std::string what =
        r.oom_note.empty() ? ReplicaExitMessage(Describe(r), code, reason) : r.oom_note;
    SystemLog(gang, &r, what);
    if (code == 0) continue;
    LifecycleAction action =
        lc.ReplicaFailed(Describe(r), code, what, AnyRunning(gang), now, r.end_time);
    Perform(gang, action, &r);
    if (action.kind != LifecycleAction::Kind::kRestartReplica || !Active(gang)) return;
  }
  std::vector<std::pair<int, std::optional<int>>> ends;
  for (const auto& r : gang.replicas) {
    ends.push_back({r.pool_index, r.done ? r.exit_code : std::nullopt});
  }
  if (PrimarySucceeded(ends)) Perform(gang, lc.Succeeded(AnyRunning(gang), now));
}

void LocalExecutor::Perform(Gang& gang, const LifecycleAction& action, const Replica* replica) {
  using Kind = LifecycleAction::Kind;
  if (!action.log.empty() && action.kind != Kind::kKill) SystemLog(gang, replica, action.log);
  switch (action.kind) {
    case Kind::kNone:
      return;
    case Kind::kTerminate:
      for (auto& r : gang.replicas) {
        if (!r.running) continue;
        SystemLog(gang, &r,
                  "stopping " + Describe(r) + ": SIGTERM, then SIGKILL after " +
                      std::to_string(gang.spec.kill_grace.count()) + "s");
        RuntimeOf(gang, r).Terminate(r.handle);
      }
      if (gang.state == GangState::kCancelling) Notify(gang);
      Persist(gang);
      return;
    case Kind::kKill:
      for (auto& r : gang.replicas) {
        if (!r.running) continue;
        SystemLog(gang, &r, action.log);
        RuntimeOf(gang, r).Kill(r.handle);
      }
      Persist(gang);
      return;
    case Kind::kRestartReplica:
      return ScheduleRestarts(gang, &gang.replicas[replica - gang.replicas.data()],
                              action.not_before.value_or(clock_.Now()));
    case Kind::kRestartGang:
      return ScheduleRestarts(gang, nullptr, action.not_before.value_or(clock_.Now()));
    case Kind::kFinished:
      Finished(gang);
      return;
  }
}

void LocalExecutor::ScheduleRestarts(Gang& gang, Replica* only,
                                     std::chrono::system_clock::time_point due) {
  auto now = clock_.Now();
  const std::string note = RestartNote(due, now, gang.restarts_used, gang.spec.max_restarts);
  for (auto& r : gang.replicas) {
    if (only != nullptr && &r != only) continue;
    r.running = false;
    r.done = true;  // its end is handled: it waits for the restart, not to be judged again
    r.restart_at = due;
    r.restart_note = note;
  }
  if (due <= now) return StartDueRestarts(gang);
  Persist(gang);
  Notify(gang);
}

void LocalExecutor::StartDueRestarts(Gang& gang) {
  auto now = clock_.Now();
  bool started = false;
  for (auto& r : gang.replicas) {
    if (!r.restart_at || *r.restart_at > now) continue;
    r.restarts += 1;
    LaunchReplica(gang, r);  // clears restart_at
    started = true;
    if (!Active(gang)) return;
  }
  if (!started) return;
  Persist(gang);
  Notify(gang);
}

void LocalExecutor::Finished(Gang& gang) {
  scheduler_.Remove(gang.spec.job_id);
  // Its end is its replicas' last exit (found later after a server restart), when every replica
  // that ran has a known one.
  std::optional<std::chrono::system_clock::time_point> last_exit;
  bool all_known = true;
  for (const auto& r : gang.replicas) {
    if (r.attempt == 0) continue;
    all_known = all_known && r.end_time.has_value();
    if (r.end_time && (!last_exit || *r.end_time > *last_exit)) last_exit = r.end_time;
  }
  Lifecycle(gang).EndedAt(all_known ? last_exit : std::nullopt);
  for (auto& r : gang.replicas) {
    ports_in_use_.erase(r.port);
    r.running = false;
    r.restart_at.reset();  // a restart that waited for its backoff will not happen
    r.restart_note.clear();
    ReleaseLimits(gang, r, /*ended_now=*/false);  // retries what PollReplica could not remove
    if (r.attempt > 0) pending_releases_.emplace_back(&RuntimeOf(gang, r), r.handle);
  }
  if (gang.state != GangState::kSucceeded)
    SystemLog(gang, nullptr,
              "job ended: " + GangStateName(gang.state) +
                  (gang.error_message.empty() ? "" : ": " + gang.error_message));
  Persist(gang, /*durable=*/true);
  ended_.push_back(gang.spec.job_id);
  Notify(gang);
}

std::vector<ReplicaDemand> LocalExecutor::DemandsOf(const GangSpec& spec) const {
  std::vector<ReplicaDemand> out;
  for (const auto& r : spec.replicas) {
    ReplicaDemand d;
    // A spec the catalog refuses was never admitted (ValidateLocked): it demands nothing.
    auto m = catalog_.Resolve({r.machine_type, r.accelerator_type, r.accelerator_count}, "");
    if (m.ok()) {
      d.cpus = m->vcpus;
      d.memory_gib = m->memory_gib;
      d.gpus = m->accelerator_count;
    }
    out.push_back(d);
  }
  return out;
}

StatusOr<GangStatus> LocalExecutor::Adopt(const GangSpec& spec) {
  TY_RETURN_IF_ERROR(runtime_.CheckAvailable());
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = gangs_.find(spec.job_id); it != gangs_.end()) return StatusOf(*it->second);
  auto persisted = LoadGangState(fs::absolute(spec.job_dir));
  if (!persisted.ok() && persisted.status().code() != StatusCode::kNotFound) {
    return persisted.status();
  }
  if (!persisted.ok() || persisted->gang.state == GangState::kQueued) {
    // It had not started: it queues again (keeping its place is impossible; the controller adopts
    // jobs in creation order, which restores FIFO order among them).
    TY_RETURN_IF_ERROR(SubmitLocked(spec, /*readopting=*/true));
    return StatusOf(*gangs_.at(spec.job_id));
  }
  auto gang = std::make_unique<Gang>(std::move(persisted->gang));
  gang->spec = spec;
  gang->spec.job_dir = fs::absolute(spec.job_dir);
  gang->demands = DemandsOf(spec);
  std::vector<std::pair<int, int>> replicas;
  for (const auto& r : gang->replicas) replicas.push_back({r.pool_index, r.replica_index});
  TY_RETURN_IF_ERROR(CheckSameReplicas(spec, replicas, kLocalStateFileName));
  TY_RETURN_IF_ERROR(RegisterJobDir(options_.data_dir, kLocalRegistry, spec.job_id, spec.job_dir));
  Gang& g = *gang;
  gangs_[spec.job_id] = std::move(gang);
  if (GangLifecycle::IsTerminal(g.state)) {
    ended_.push_back(spec.job_id);
    return StatusOf(g);
  }
  std::vector<std::vector<int>> gpus, cpus;
  for (auto& r : g.replicas) {
    gpus.push_back(r.gpus);
    cpus.push_back(r.cpus);
    ports_in_use_.insert(r.port);
    if (r.attempt == 0 && !r.done) {
      r.lost_reason = "was never started (the server stopped while starting the job)";
    }
  }
  if (auto placed = scheduler_.AddRunning(spec.job_id, g.demands, gpus, cpus, spec.project);
      placed.ok()) {
    for (size_t i = 0; i < g.replicas.size() && i < placed->size(); ++i) {
      g.replicas[i].cpus = (*placed)[i];  // restarts of older-state replicas get pinned too
    }
  }
  SystemLog(g, nullptr, "server restarted; re-adopting the job");
  for (auto& r : g.replicas) {
    if (r.running) WatchExit(RuntimeOf(g, r), r.handle);
    if (r.running) ReadoptLimits(g, r);
  }
  for (auto& r : g.replicas) {
    PollReplica(g, r);
    // Found gone now: lost with the server, not while it watched.
    if (!r.lost_reason.empty() && !r.done && r.lost_failure == GangFailure::kReplicaLost) {
      r.lost_failure = GangFailure::kLostOnAdopt;
    }
  }
  AdvanceGang(g);
  Persist(g);
  Notify(g);
  wake_ = true;
  cv_.notify_all();
  return StatusOf(g);
}

}  // namespace trainyard::executor
