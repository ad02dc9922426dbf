// LocalExecutor: starting, watching, restarting, stopping and re-adopting gangs. Every function
// here runs with mu_ held (from the monitor thread's Tick, or Submit/Cancel/Adopt).
#include <signal.h>

#include <algorithm>
#include <cstdio>

#include "common/file_util.h"
#include "executor/local_executor.h"
#include "executor/local_executor_state.h"
#include "executor/replica_env.h"

namespace trainyard::executor {
namespace fs = std::filesystem;

namespace {

std::string FormatGib(double gib) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", gib);
  return buf;
}

std::string Describe(const LocalExecutor::Replica& r) {
  return "workerpool" + std::to_string(r.pool_index) + " replica " +
         std::to_string(r.replica_index);
}

// Whether the gang has a primary replica, whose success ends the job.
bool HasPool0(const LocalExecutor::Gang& g) {
  return std::any_of(g.replicas.begin(), g.replicas.end(),
                     [](const auto& r) { return r.pool_index == 0; });
}

}  // namespace

GangStatus LocalExecutor::StatusOf(const Gang& gang) const { return StatusFromGang(gang); }

void LocalExecutor::Persist(const Gang& gang, bool durable) {
  // A durable write is a plain replace now plus fsyncs that sync_thread_ does outside mu_, so
  // ~10 ms of fsync never blocks Submit/Get or other gangs.
  if (Status s = SaveGangState(gang, /*durable=*/false); !s.ok()) {
    SystemLog(gang, nullptr, "cannot persist executor state: " + s.ToString());
  } else if (durable) {
    std::lock_guard<std::mutex> lock(sync_mu_);
    pending_fsyncs_.push_back(gang.spec.job_dir / "executor_state.json");
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
  // Best effort: a log that cannot be written must not stop the job.
  (void)AppendJobLog(gang.spec.job_dir / "logs", options_.log_limits, {rec});
}

void LocalExecutor::WatchExit(const ProcessId& process) {
  auto fd = ops_.OpenExitFd(process);
  if (fd.ok()) {
    if (exit_watcher_->Add(*fd)) return;
  } else if (fd.status().code() == StatusCode::kNotFound) {
    wake_ = true;  // already gone: look at it on the next loop iteration, not the next tick
    return;
  }
  // Not watchable: the poll every poll_interval notices the exit.
}

void LocalExecutor::ReleaseLimits(const Gang& gang, Replica& r, bool ended_now) {
  if (r.cgroup.empty()) return;
  if (ended_now && r.exit_code == 128 + SIGKILL && CgroupLimits::OomKills(r.cgroup) > 0) {
    const ReplicaSpec& spec = gang.spec.replicas[&r - gang.replicas.data()];
    SystemLog(gang, &r,
              Describe(r) + " was killed by the kernel's OOM killer: it used more than the " +
                  FormatGib(gang.demands[&r - gang.replicas.data()].memory_gib) + " GiB of " +
                  spec.machine_type + " (memory.max of " + r.cgroup.string() +
                  "); pick a machine type with more memory");
  }
  if (CgroupLimits::Remove(r.cgroup)) r.cgroup.clear();
}

void LocalExecutor::StartGang(Gang& gang, const Admission& admission) {
  gang.phase = Phase::kRunning;
  gang.state = GangState::kPending;
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
      Finish(gang, GangState::kFailed,
             Describe(r) + " could not be given a free TCP port on " + options_.host);
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
    if (gang.phase != Phase::kRunning) return;  // a launch failed; the gang is stopping
  }
  gang.state = GangState::kRunning;
  if (!gang.start_time) gang.start_time = clock_.Now();
  Persist(gang);
  Notify(gang);
}

void LocalExecutor::LaunchReplica(Gang& gang, Replica& r) {
  const GangSpec& spec = gang.spec;
  size_t self = 0;
  ReplicaEnvInput in;
  in.job_id = spec.job_id;
  in.job_spec_json = spec.job_spec_json;
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
    if (ordered[i] == &r) self = i;
    in.members.push_back({ordered[i]->pool_index, ordered[i]->replica_index,
                          options_.host + ":" + std::to_string(ordered[i]->port)});
  }
  in.self = self;
  in.gpus = r.gpus;
  in.hp_metric_file = HpMetricFile(spec.job_dir, r.pool_index, r.replica_index);
  in.cpu_threads = static_cast<int>(r.cpus.size());
  const ReplicaSpec& rspec =
      *std::find_if(spec.replicas.begin(), spec.replicas.end(), [&](const ReplicaSpec& s) {
        return s.pool_index == r.pool_index && s.replica_index == r.replica_index;
      });
  EnvMap inherited = InheritedReplicaEnv();

  r.attempt += 1;
  r.running = true;
  r.done = false;
  r.exit_code.reset();
  r.lost_reason.clear();
  r.process = {};
  fs::path work = WorkDir(spec.job_dir, r.pool_index, r.replica_index);
  Status dirs = MakeDirs(work);
  if (dirs.ok()) dirs = MakeDirs(in.hp_metric_file.parent_path());
  LaunchRequest req;
  req.env = BuildReplicaEnv(inherited, rspec.env, in, spec.extra_env);
  req.cwd = work;
  req.output_file =
      AttemptFile(spec.job_dir, r.pool_index, r.replica_index, r.attempt, "wrapper.log");
  req.argv = {
      gang.wrapper.string(),
      "--log-dir",
      (spec.job_dir / "logs").string(),
      "--pool",
      std::to_string(r.pool_index),
      "--replica",
      std::to_string(r.replica_index),
      "--pid-file",
      AttemptFile(spec.job_dir, r.pool_index, r.replica_index, r.attempt, "pid").string(),
      "--status-file",
      AttemptFile(spec.job_dir, r.pool_index, r.replica_index, r.attempt, "status").string(),
      "--segment-bytes",
      std::to_string(options_.log_limits.segment_bytes),
      "--max-segments",
      std::to_string(options_.log_limits.max_segments)};
  if (pin_cpus_ && !r.cpus.empty()) {
    std::string list;
    for (int id : r.cpus) list += (list.empty() ? "" : ",") + std::to_string(id);
    req.argv.insert(req.argv.end(), {"--cpus", list});
  }
  if (!r.cgroup.empty() && CgroupLimits::Remove(r.cgroup)) r.cgroup.clear();  // last attempt's
  if (cgroups_.enabled() && dirs.ok()) {
    const size_t i = &r - gang.replicas.data();
    auto cgroup =
        cgroups_.Create("trainyard-" + spec.job_id + "-" + TaskName(r.pool_index, r.replica_index) +
                            "-" + std::to_string(r.attempt),
                        gang.demands[i].memory_gib, gang.demands[i].cpus);
    if (cgroup.ok()) {
      r.cgroup = *cgroup;
      req.argv.insert(req.argv.end(), {"--cgroup", r.cgroup.string()});
    } else {
      SystemLog(gang, &r, "runs without memory/CPU limits: " + cgroup.status().message());
    }
  }
  req.argv.push_back("--");
  req.argv.insert(req.argv.end(), rspec.argv.begin(), rspec.argv.end());
  StatusOr<ProcessId> launched = dirs.ok() ? ops_.Launch(req) : StatusOr<ProcessId>(dirs);
  if (!launched.ok()) {
    r.running = false;
    r.done = true;
    r.lost_reason = "could not be started: " + launched.status().message();
    SystemLog(gang, &r, Describe(r) + " " + r.lost_reason);
    BeginStop(gang, StopGoal::kFail, Describe(r) + " " + r.lost_reason);
    return;
  }
  r.wrapper = *launched;
  unreaped_.push_back(r.wrapper);
  WatchExit(r.wrapper);
  if (r.attempt > 1) {
    SystemLog(gang, &r,
              "starting " + Describe(r) + " again (attempt " + std::to_string(r.attempt) + ")");
  }
  Persist(gang);
}

void LocalExecutor::PollReplica(Gang& gang, Replica& r) {
  if (!r.running) return;
  const fs::path& dir = gang.spec.job_dir;
  if (!r.process.valid()) {
    if (auto pid = ReadPidFile(AttemptFile(dir, r.pool_index, r.replica_index, r.attempt, "pid"));
        pid.ok()) {
      r.process = *pid;
      Persist(gang);
    }
  }
  fs::path status_file = AttemptFile(dir, r.pool_index, r.replica_index, r.attempt, "status");
  auto code = ReadStatusFile(status_file);
  if (!code.ok() && !ops_.IsAlive(r.wrapper) && !ops_.IsAlive(r.process)) {
    code = ReadStatusFile(status_file);  // it may have been written just before the wrapper exited
    if (!code.ok()) {
      r.running = false;
      r.lost_reason = "ended without a recorded exit code (its supervisor, pid " +
                      std::to_string(r.wrapper.pid) + ", is gone: " + code.status().message() + ")";
      ReleaseLimits(gang, r, /*ended_now=*/true);
      Persist(gang);
      return;
    }
  }
  if (code.ok()) {
    r.running = false;
    r.exit_code = *code;
    ReleaseLimits(gang, r, /*ended_now=*/true);
    Persist(gang);
    Notify(gang);
  }
}

void LocalExecutor::AdvanceGang(Gang& gang) {
  auto now = clock_.Now();
  bool timed_out =
      gang.spec.timeout && gang.start_time && now >= *gang.start_time + *gang.spec.timeout;
  if (gang.phase == Phase::kRunning) {
    if (timed_out) {
      BeginStop(gang, StopGoal::kTimeout,
                "timed out after " + std::to_string(gang.spec.timeout->count()) + "s");
      return;
    }
    for (auto& r : gang.replicas) {
      if (r.running || r.done) continue;
      if (!r.lost_reason.empty()) {
        r.done = true;
        BeginStop(gang, StopGoal::kFail, Describe(r) + " " + r.lost_reason);
        return;
      }
      int code = r.exit_code.value_or(-1);
      SystemLog(gang, &r, Describe(r) + " exited with code " + std::to_string(code));
      if (code == 0) {
        r.done = true;
        continue;
      }
      if (gang.restarts_used < gang.spec.max_restarts) {
        gang.restarts_used += 1;
        std::string budget = "restart " + std::to_string(gang.restarts_used) + " of " +
                             std::to_string(gang.spec.max_restarts);
        if (gang.spec.restart_job_on_worker_restart) {
          SystemLog(gang, &r,
                    "restarting the whole job (restartJobOnWorkerRestart; " + budget + ")");
          r.done = true;
          BeginStop(gang, StopGoal::kRestartGang, "");
          return;
        }
        SystemLog(gang, &r, "restarting " + Describe(r) + " (" + budget + ")");
        r.restarts += 1;
        LaunchReplica(gang, r);
        if (gang.phase != Phase::kRunning) return;
        Notify(gang);
        continue;
      }
      r.done = true;
      std::string msg = Describe(r) + " exited with code " + std::to_string(code);
      if (gang.restarts_used > 0) {
        msg += " after " + std::to_string(gang.restarts_used) + " restart" +
               (gang.restarts_used == 1 ? "" : "s");
      }
      BeginStop(gang, StopGoal::kFail, msg);
      return;
    }
    // Success: the primary replica (or, without pool 0, every replica) exited 0.
    bool has_pool0 = HasPool0(gang);
    bool succeeded = std::all_of(gang.replicas.begin(), gang.replicas.end(), [&](const Replica& r) {
      return (has_pool0 && r.pool_index != 0) || (r.done && r.exit_code == 0);
    });
    if (succeeded) BeginStop(gang, StopGoal::kSucceed, "");
    return;
  }
  if (gang.phase != Phase::kStopping) return;
  if (timed_out && gang.stop_goal == StopGoal::kRestartGang) {
    gang.stop_goal = StopGoal::kTimeout;
    gang.stop_message = "timed out after " + std::to_string(gang.spec.timeout->count()) + "s";
  }
  bool any_running = std::any_of(gang.replicas.begin(), gang.replicas.end(),
                                 [](const Replica& r) { return r.running; });
  if (any_running) {
    if (!gang.killed && now >= gang.stop_started + gang.spec.kill_grace) {
      gang.killed = true;
      for (auto& r : gang.replicas) {
        if (!r.running) continue;
        SystemLog(gang, &r,
                  "still running " + std::to_string(gang.spec.kill_grace.count()) +
                      "s after SIGTERM; sending SIGKILL");
        if (!ops_.Signal(r.process, SIGKILL, /*group=*/true)) {
          ops_.Signal(r.wrapper, SIGKILL, /*group=*/true);
        }
      }
      Persist(gang);
    }
    return;
  }
  switch (gang.stop_goal) {
    case StopGoal::kSucceed:
      Finish(gang, GangState::kSucceeded, "");
      break;
    case StopGoal::kCancel:
      Finish(gang, GangState::kCancelled, gang.stop_message);
      break;
    case StopGoal::kRestartGang:
      gang.phase = Phase::kRunning;
      gang.state = GangState::kRunning;
      gang.stop_goal = StopGoal::kNone;
      gang.killed = false;
      for (auto& r : gang.replicas) {
        r.restarts += 1;
        LaunchReplica(gang, r);
        if (gang.phase != Phase::kRunning) return;
      }
      Persist(gang);
      Notify(gang);
      break;
    default:
      Finish(gang, GangState::kFailed, gang.stop_message);
      break;
  }
}

void LocalExecutor::BeginStop(Gang& gang, StopGoal goal, std::string message) {
  gang.phase = Phase::kStopping;
  gang.stop_goal = goal;
  gang.stop_message = std::move(message);
  gang.stop_started = clock_.Now();
  gang.killed = false;
  for (auto& r : gang.replicas) {
    if (!r.running) continue;
    SystemLog(gang, &r,
              "stopping " + Describe(r) + ": SIGTERM, then SIGKILL after " +
                  std::to_string(gang.spec.kill_grace.count()) + "s");
    // The wrapper forwards SIGTERM to the replica's process group; if the wrapper is gone,
    // signal the group directly.
    if (!ops_.Signal(r.wrapper, SIGTERM, /*group=*/false)) {
      ops_.Signal(r.process, SIGTERM, /*group=*/true);
    }
  }
  if (goal == StopGoal::kCancel) {
    gang.state = GangState::kCancelling;
    Notify(gang);
  }
  Persist(gang);
  AdvanceGang(gang);  // nothing running: finish now
}

void LocalExecutor::Finish(Gang& gang, GangState state, std::string message) {
  gang.phase = Phase::kDone;
  gang.state = state;
  gang.error_message = std::move(message);
  gang.end_time = clock_.Now();
  scheduler_.Remove(gang.spec.job_id);
  for (auto& r : gang.replicas) {
    ports_in_use_.erase(r.port);
    r.running = false;
    ReleaseLimits(gang, r, /*ended_now=*/false);  // retries what PollReplica could not remove
  }
  if (state != GangState::kSucceeded)
    SystemLog(gang, nullptr,
              "job ended: " + GangStateName(state) +
                  (gang.error_message.empty() ? "" : ": " + gang.error_message));
  Persist(gang, /*durable=*/true);
  ended_.push_back(gang.spec.job_id);
  Notify(gang);
}

std::vector<ReplicaDemand> LocalExecutor::DemandsOf(const GangSpec& spec) const {
  std::vector<ReplicaDemand> out;
  for (const auto& r : spec.replicas) {
    ReplicaDemand d;
    if (const MachineType* m = catalog_.FindMachine(r.machine_type)) {
      d.cpus = m->vcpus;
      d.memory_gib = m->memory_gib;
      d.gpus = r.accelerator_count > 0 ? r.accelerator_count : m->bundled_accelerator_count;
    }
    out.push_back(d);
  }
  return out;
}

StatusOr<GangStatus> LocalExecutor::Adopt(const GangSpec& spec) {
  auto wrapper_or = FindExecWrapper(options_.wrapper_path);
  if (!wrapper_or.ok()) return FailedPreconditionError(wrapper_or.status().message());
  fs::path wrapper = *wrapper_or;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = gangs_.find(spec.job_id); it != gangs_.end()) return StatusOf(*it->second);
  auto persisted = LoadGangState(fs::absolute(spec.job_dir));
  if (!persisted.ok() && persisted.status().code() != StatusCode::kNotFound) {
    return persisted.status();
  }
  if (!persisted.ok() || persisted->gang.phase == Phase::kQueued) {
    // It had not started: it queues again (keeping its place is impossible; the controller adopts
    // jobs in creation order, which restores FIFO order among them).
    TY_RETURN_IF_ERROR(SubmitLocked(spec, wrapper, /*readopting=*/true));
    return StatusOf(*gangs_.at(spec.job_id));
  }
  auto gang = std::make_unique<Gang>(std::move(persisted->gang));
  gang->spec = spec;
  gang->spec.job_dir = fs::absolute(spec.job_dir);
  gang->wrapper = wrapper;
  gang->demands = DemandsOf(spec);
  std::vector<std::pair<int, int>> replicas;
  for (const auto& r : gang->replicas) replicas.push_back({r.pool_index, r.replica_index});
  TY_RETURN_IF_ERROR(CheckSameReplicas(spec, replicas, kLocalStateFile));
  TY_RETURN_IF_ERROR(RegisterJobDir(options_.data_dir, kLocalRegistry, spec.job_id, spec.job_dir));
  Gang& g = *gang;
  gangs_[spec.job_id] = std::move(gang);
  if (g.phase == Phase::kDone) {
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
  if (auto placed = scheduler_.AddRunning(spec.job_id, g.demands, gpus, cpus); placed.ok()) {
    for (size_t i = 0; i < g.replicas.size() && i < placed->size(); ++i) {
      g.replicas[i].cpus = (*placed)[i];  // restarts of older-state replicas get pinned too
    }
  }
  SystemLog(g, nullptr, "server restarted; re-adopting the job");
  for (auto& r : g.replicas) {
    if (r.running) WatchExit(r.wrapper);
  }
  for (auto& r : g.replicas) PollReplica(g, r);
  AdvanceGang(g);
  Persist(g);
  Notify(g);
  wake_ = true;
  cv_.notify_all();
  return StatusOf(g);
}

}  // namespace trainyard::executor
