#include "local_executor/local_executor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "common/file_util.h"
#include "executor/gang_record.h"
#include "executor/replica_env.h"
#include "local_executor/local_executor_state.h"
#include "machines/gpu_model.h"

namespace trainyard::executor {
namespace fs = std::filesystem;
using std::chrono::system_clock;

namespace {

std::string PoolField(int pool) { return "workerPoolSpecs[" + std::to_string(pool) + "]"; }

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", std::round(v * 10) / 10);
  return buf;
}

}  // namespace

namespace {

bool ResolvableCommand(const std::string& name, const EnvMap& env) {
  if (name.find('/') != std::string::npos) {
    return name[0] != '/' ||
           ::access(name.c_str(), X_OK) == 0;  // relative: resolved in the work dir
  }
  auto it = env.find("PATH");
  std::stringstream ss(it == env.end() ? "/usr/local/bin:/usr/bin:/bin" : it->second);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (::access(((dir.empty() ? "." : dir) + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// The flags of `trainyard server` that set `o`'s host overrides, polling and cgroups; their names
// and texts are the server's documented interface (docs/api.md). Long because it is one table:
// a flag per entry, each with its help text and setter, read best in one place.
std::vector<ExecutorFlag> LocalExecutorFlags(const std::shared_ptr<LocalExecutorOptions>& o) {
  auto int_flag = [o](std::string name, int min, int max, auto store) {
    return [o, name, min, max, store](const std::string& value) -> Status {
      TY_ASSIGN_OR_RETURN(int n, ParseIntFlag(name, value, min, max));
      store(*o, n);
      return Status::Ok();
    };
  };
  constexpr int kMax = std::numeric_limits<int>::max();
  return {
      {"--cpus", "CPU cores to schedule (default: detected)", true, "",
       int_flag("--cpus", 0, kMax, [](LocalExecutorOptions& x, int n) { x.cpus = n; })},
      {"--memory-gib", "Memory to schedule (default: detected)", true, "",
       [o](const std::string& value) -> Status {
         TY_ASSIGN_OR_RETURN(o->memory_gib, ParseNumberFlag("--memory-gib", value));
         return Status::Ok();
       }},
      {"--gpus", "GPUs to schedule (default: detected with nvidia-smi)", true, "",
       int_flag("--gpus", 0, kMax, [](LocalExecutorOptions& x, int n) { x.gpus = n; })},
      {"--max-replicas",
       "Replicas running at once on this host, over all jobs (default: 4 per CPU, at least 8; "
       "0 = no cap); a job with more is refused at create",
       true, "",
       int_flag("--max-replicas", 0, kMax,
                [](LocalExecutorOptions& x, int n) { x.max_replicas = n; })},
      {"--executor-poll-ms",
       "Local executor: how often replicas are also polled (exits normally wake it at once "
       "through pidfds; this is the fallback)",
       true, std::to_string(o->poll_interval.count()),
       int_flag(
           "--executor-poll-ms", 1, 10000,
           [](LocalExecutorOptions& x, int n) { x.poll_interval = std::chrono::milliseconds(n); })},
      {"--cgroup-parent",
       "Local executor: an empty cgroup v2 directory (absolute or below /sys/fs/cgroup) delegated "
       "to the server, in which each replica gets a cgroup with its machine type's memory.max and "
       "cpu.max (default: the server's own cgroup, usable only when it is the root cgroup); on "
       "cgroup v1 a cgroup path made in the memory and cpu hierarchies (default: the server's "
       "own cgroups there)",
       true, "",
       [o](const std::string& value) {
         o->cgroup.parent = value;
         return Status::Ok();
       }},
      {"--no-cgroups", "Local executor: do not put replicas in cgroups (no memory/CPU limits)",
       false, "",
       [o](const std::string&) {
         o->cgroup.enabled = false;
         return Status::Ok();
       }},
      {"--cgroup-delegated",
       "Local executor: the server's cgroup (or --cgroup-parent) is delegated to it (systemd "
       "Delegate=yes): the server moves into its leaf 'server', replica supervisors into "
       "'supervisors' and each replica into a leaf of its own beside them, so killing the "
       "server's cgroup leaves jobs running",
       false, "",
       [o](const std::string&) {
         o->cgroup.delegated = true;
         return Status::Ok();
       }},
      {"--restart-backoff-seconds",
       "Local executor: the wait before a failed replica's first restart, doubled for each next "
       "one up to --restart-backoff-max-seconds (0 = restart at once)",
       true, std::to_string(o->restart_backoff.initial.count()),
       int_flag("--restart-backoff-seconds", 0, 86400,
                [](LocalExecutorOptions& x, int n) {
                  x.restart_backoff.initial = std::chrono::seconds(n);
                })},
      {"--restart-backoff-max-seconds",
       "Local executor: the longest wait between restarts of a replica", true,
       std::to_string(o->restart_backoff.max.count()),
       int_flag("--restart-backoff-max-seconds", 0, 86400,
                [](LocalExecutorOptions& x, int n) {
                  x.restart_backoff.max = std::chrono::seconds(n);
                })},
      {"--any-gpu-model",
       "Local executor: every GPU serves every acceleratorType (for GPUs whose nvidia-smi names "
       "Trainyard does not know); default: only the requested model",
       false, "",
       [o](const std::string&) {
         o->any_gpu_model = true;
         return Status::Ok();
       }},
  };
}

}  // namespace

Status RegisterLocalExecutor(ExecutorRegistry* registry) {
  auto flagged = std::make_shared<LocalExecutorOptions>();
  ExecutorBackend backend;
  backend.flags = LocalExecutorFlags(flagged);
  backend.create = [flagged](const ExecutorConfig& c) -> StatusOr<CreatedExecutor> {
    LocalExecutorOptions options = *flagged;
    options.data_dir = c.data_dir;
    options.container_runtime = c.container_runtime;
    options.no_container_reason = c.no_container_reason;
    auto local = std::make_unique<LocalExecutor>(options);
    CreatedExecutor created;
    // Once, at start: which resource limits replicas get on this host, and why not.
    created.notes.push_back(local->inventory().ToString());
    for (auto& note : local->LimitNotes()) created.notes.push_back(std::move(note));
    created.executor = std::move(local);
    return created;
  };
  return registry->Register("local", std::move(backend));
}

LocalExecutor::LocalExecutor(LocalExecutorOptions options)
    : options_(std::move(options)),
      catalog_(machines::MachineCatalog::Default()),
      clock_(options_.clock ? *options_.clock : Clock::Real()),
      owned_runtime_(options_.runtime ? nullptr
                                      : std::make_unique<HostProcessRuntime>(options_.wrapper_path,
                                                                             options_.process_ops)),
      runtime_(options_.runtime ? *options_.runtime : *owned_runtime_),
      inventory_(options_.inventory
                     ? *options_.inventory
                     : DetectHostInventory({options_.cpus, options_.memory_gib, options_.gpus},
                                           &inventory_warnings_)),
      cgroups_(CgroupLimits::Probe(options_.cgroup)),
      scheduler_([this] {
        SchedulerCapacity cap{static_cast<double>(inventory_.cpus), inventory_.memory_gib, {}, {}};
        cap.max_replicas = MaxReplicas();
        for (const auto& g : inventory_.gpus) cap.gpu_indices.push_back(g.index);
        // Placement uses the real CPU ids when there is one per schedulable CPU; otherwise
        // (--cpus larger than ours, or a hand-made inventory) ids 0..N-1 that are not pinned.
        if (static_cast<int>(inventory_.cpu_ids.size()) == inventory_.cpus) {
          cap.cpu_ids = inventory_.cpu_ids;
        }
        return cap;
      }()) {
  // Pin only to CPUs this process may run on: a replica cannot be given others.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  bool known = ::sched_getaffinity(0, sizeof(mine), &mine) == 0;
  bool all_ours = static_cast<int>(inventory_.cpu_ids.size()) == inventory_.cpus &&
                  inventory_.cpus > 0 &&
                  std::all_of(inventory_.cpu_ids.begin(), inventory_.cpu_ids.end(), [&](int id) {
                    return known && id >= 0 && id < CPU_SETSIZE && CPU_ISSET(id, &mine);
                  });
  pin_cpus_ = options_.pin_cpus && all_ours;
  if (!options_.pin_cpus) {
    pin_note_ = "turned off by configuration";
  } else if (!all_ours) {
    pin_note_ = "the inventory's " + std::to_string(inventory_.cpus) +
                " CPUs are not all CPUs this process may run on (--cpus larger than the host, "
                "or an inventory given by hand)";
  }
  exit_watcher_ = std::make_unique<ExitWatcher>([this] {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;
    cv_.notify_all();
  });
  sync_thread_ = std::thread([this] { SyncLoop(); });
  if (options_.start_monitor) thread_ = std::thread([this] { Loop(); });
}

std::vector<std::string> LocalExecutor::LimitNotes() const {
  std::vector<std::string> notes;
  std::string ids;
  for (int id : inventory_.cpu_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  notes.push_back(pin_cpus_ ? "CPU pinning (sched_setaffinity): enforced; each replica runs on "
                              "its own CPUs out of " +
                                  ids
                            : "CPU pinning (sched_setaffinity): not enforced: " + pin_note_);
  if (cgroups_.enabled()) {
    std::string parents;
    for (const auto& p : cgroups_.parents()) parents += (parents.empty() ? "" : ", ") + p.string();
    notes.push_back(std::string("memory/CPU limits (cgroup ") +
                    (cgroups_.version() == CgroupVersion::kV1 ? "v1 " : "v2 ") +
                    cgroups_.LimitFiles() +
                    " of the machine type): enforced, replica cgroups under " + parents);
  } else {
    notes.push_back("memory/CPU limits (cgroups): not enforced: " + cgroups_.why_not());
  }
  if (!cgroups_.supervisor_cgroups().empty()) {
    const fs::path base = cgroups_.supervisor_cgroups().front().parent_path();
    notes.push_back("delegated cgroup " + base.string() +
                    ": the server in its leaf 'server', replica supervisors in 'supervisors'");
  }
  notes.push_back(
      "OMP_NUM_THREADS/MKL_NUM_THREADS: set to each replica's CPU count unless its job sets them");
  if (!exit_watcher_->usable()) {
    notes.push_back("replica exits are noticed by polling only (no epoll); every " +
                    std::to_string(options_.poll_interval.count()) + " ms");
  }
  return notes;
}

LocalExecutor::~LocalExecutor() { Shutdown(); }

void LocalExecutor::SetListener(Listener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listener_ = std::move(listener);
}

void LocalExecutor::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  // Replicas run on; a restarted server must be placeable in a delegated cgroup v2 parent.
  if (Status s = cgroups_.ReleaseControllers(); !s.ok()) {
    std::fprintf(stderr, "local executor: %s\n", s.ToString().c_str());
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  exit_watcher_.reset();  // no more wake-ups; its thread may be waiting for mu_, not holding it
  {
    std::lock_guard<std::mutex> lock(sync_mu_);
    sync_stop_ = true;
  }
  sync_cv_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();
}

Status LocalExecutor::ValidateImage(const std::string& field, const ReplicaSpec& r) const {
  std::string image_field =
      field + "." + (r.image_field.empty() ? "containerSpec.imageUri" : r.image_field);
  if (options_.container_runtime == nullptr) {
    return InvalidArgumentError(
        image_field + ": image '" + r.image +
        "' is not in the image catalog, and this server runs no containers (" +
        options_.no_container_reason +
        "); map the image to a local command in the catalog file (trainyard server "
        "--image-catalog FILE, see docs/api.md), or use imageUri \"local\" with a command");
  }
  // A malformed reference is the job's fault (400) even where podman is missing.
  TY_RETURN_IF_ERROR(options_.container_runtime->CheckImage(r.image, image_field));
  if (Status s = options_.container_runtime->CheckAvailable(); !s.ok()) {
    return Status(s.code(), image_field + ": image '" + r.image +
                                "' needs a container runtime, but " + s.message());
  }
  return Status::Ok();
}

Status LocalExecutor::Validate(const GangSpec& spec) const {
  std::vector<ReplicaDemand> demands;
  std::vector<std::string> warnings;
  return ValidateLocked(spec, &demands, &warnings);
}

void LocalExecutor::SetProjectWeight(const std::string& project, double weight) {
  std::lock_guard<std::mutex> lock(mu_);
  scheduler_.SetProjectWeight(project, weight);
}

void LocalExecutor::SetPaused(const std::string& scope, bool paused) {
  std::lock_guard<std::mutex> lock(mu_);
  scheduler_.SetPaused(scope, paused);
  wake_ = true;  // a resume may start queued gangs at once
  cv_.notify_all();
}

std::vector<std::string> LocalExecutor::AdmissionNotes(const GangSpec& spec) const {
  std::vector<ReplicaDemand> demands;
  std::vector<std::string> warnings;
  if (!ValidateLocked(spec, &demands, &warnings).ok()) return {};
  return warnings;
}

int LocalExecutor::MaxReplicas() const {
  if (options_.max_replicas) return *options_.max_replicas;
  return std::max(8, 4 * inventory_.cpus);
}

Status LocalExecutor::ValidateLocked(const GangSpec& spec, std::vector<ReplicaDemand>* demands,
                                     std::vector<std::string>* warnings) const {
  TY_RETURN_IF_ERROR(ValidateGangBasics(spec));
  if (const int cap = MaxReplicas(); cap > 0 && static_cast<int>(spec.replicas.size()) > cap) {
    return InvalidArgumentError(
        "workerPoolSpecs: the job has " + std::to_string(spec.replicas.size()) +
        " replicas in all, but this host runs at most " + std::to_string(cap) +
        " at once (they all start together); lower replicaCount, start the server with "
        "--max-replicas " +
        std::to_string(spec.replicas.size()) + ", or run it on the Slurm executor");
  }
  EnvMap env = InheritedReplicaEnv();
  int total_gpus = 0;
  std::map<std::string, int> gpus_by_type;  // accelerator type -> GPUs the gang asks for
  for (const auto& r : spec.replicas) {
    std::string field = PoolField(r.pool_index);
    TY_ASSIGN_OR_RETURN(machines::ResolvedMachine machine,
                        catalog_.Resolve({r.machine_type, r.accelerator_type, r.accelerator_count},
                                         field + ".machineSpec"));
    const std::string& accel = machine.accelerator_type;
    const int count = machine.accelerator_count;
    int host_gpus = static_cast<int>(inventory_.gpus.size());
    if (count > host_gpus) {
      return InvalidArgumentError(
          field + ": " + accel + " x" + std::to_string(count) + " requested but this host has " +
          (host_gpus == 0
               ? std::string("no GPU")
               : "only " + std::to_string(host_gpus) + " GPU" + (host_gpus == 1 ? "" : "s")));
    }
    total_gpus += count;
    if (total_gpus > host_gpus) {
      return InvalidArgumentError(field + ": the job needs " + std::to_string(total_gpus) +
                                  "+ GPUs at once (gang) but this host has " +
                                  std::to_string(host_gpus));
    }
    std::vector<int> candidates;
    if (count > 0) {
      TY_ASSIGN_OR_RETURN(candidates, GpuCandidates(field, accel, count, gpus_by_type[accel]));
      gpus_by_type[accel] += count;
    }
    if (!r.image.empty()) {
      TY_RETURN_IF_ERROR(ValidateImage(field, r));
    } else if (r.argv.empty() || r.argv[0].empty()) {
      return InvalidArgumentError(field +
                                  ": no command to run (containerSpec.command/args or an "
                                  "image mapped to a command)");
    } else {
      EnvMap replica_env = env;
      for (const auto& [k, v] : r.env) replica_env[k] = v;
      if (!ResolvableCommand(r.argv[0], replica_env)) {
        return InvalidArgumentError(field + ": command '" + r.argv[0] +
                                    "' is not an executable on this host's PATH");
      }
    }
    std::string task = TaskName(r.pool_index, r.replica_index);
    if (machine.vcpus > inventory_.cpus || machine.memory_gib > inventory_.memory_gib) {
      warnings->push_back(
          task + ": " + machine.machine_type + " asks for " + std::to_string(machine.vcpus) +
          " vCPUs / " + FormatNumber(machine.memory_gib) + " GiB but this host has " +
          std::to_string(inventory_.cpus) + " vCPUs / " + FormatNumber(inventory_.memory_gib) +
          " GiB; it runs taking the whole host (oversubscribed)");
    }
    demands->push_back(
        {static_cast<double>(machine.vcpus), machine.memory_gib, count, std::move(candidates)});
  }
  return Status::Ok();
}

StatusOr<std::vector<int>> LocalExecutor::GpuCandidates(const std::string& field,
                                                        const std::string& accel, int count,
                                                        int already) const {
  std::vector<int> candidates;
  std::string have;
  std::set<std::string> types;
  for (const auto& g : inventory_.gpus) {
    if (options_.any_gpu_model || machines::GpuServes(accel, g.name)) {
      candidates.push_back(g.index);
    }
    have += (have.empty() ? "" : ", ") + std::to_string(g.index) + ": " + g.name;
    if (std::string t = machines::AcceleratorTypeOf(g.name); !t.empty()) types.insert(t);
  }
  if (candidates.empty()) {
    std::string use;
    for (const auto& t : types) use += (use.empty() ? "" : " or ") + t;
    return InvalidArgumentError(
        field + ".machineSpec.acceleratorType: " + accel + " requested but this host's GPUs are " +
        have + " (nvidia-smi)" + (use.empty() ? "" : "; ask for acceleratorType " + use) +
        ", or start the server with --any-gpu-model to let any GPU serve any type");
  }
  if (already + count > static_cast<int>(candidates.size())) {
    return InvalidArgumentError(field + ".machineSpec.acceleratorCount: the job needs " +
                                std::to_string(already + count) + " x " + accel +
                                " at once (gang) but this host has " +
                                std::to_string(candidates.size()) + " (" + have + ")");
  }
  return candidates;
}

Status LocalExecutor::Submit(const GangSpec& spec) {
  TY_RETURN_IF_ERROR(runtime_.CheckAvailable());
  std::lock_guard<std::mutex> lock(mu_);
  return SubmitLocked(spec, /*readopting=*/false);
}

Status LocalExecutor::SubmitLocked(const GangSpec& spec, bool readopting) {
  if (gangs_.count(spec.job_id) > 0 ||
      (!readopting && LookupJobDir(options_.data_dir, kLocalRegistry, spec.job_id).ok())) {
    return AlreadyExistsError("job " + spec.job_id + " was already submitted");
  }
  auto gang = std::make_unique<Gang>();
  TY_RETURN_IF_ERROR(ValidateLocked(spec, &gang->demands, &gang->warnings));
  bool clamped = false;
  TY_RETURN_IF_ERROR(scheduler_.Enqueue(spec.job_id, gang->demands,
                                        GangClass{spec.project, spec.priority}, &clamped));
  if (clamped) {
    gang->warnings.push_back(
        "the job's replicas together ask for more CPU or memory than this "
        "host has (" +
        inventory_.ToString() + "); it starts once the host is idle and takes all of it");
  }
  gang->spec = spec;
  // The wrapper runs in the replica's work dir: every path it gets must be absolute.
  gang->spec.job_dir = fs::absolute(spec.job_dir);
  for (const auto& r : spec.replicas) {
    Replica rep;
    rep.pool_index = r.pool_index;
    rep.replica_index = r.replica_index;
    gang->replicas.push_back(std::move(rep));
  }
  if (Status s = RegisterJobDir(options_.data_dir, kLocalRegistry, spec.job_id, gang->spec.job_dir);
      !s.ok()) {
    scheduler_.Remove(spec.job_id);
    return s;
  }
  Gang& g = *gang;
  gangs_[spec.job_id] = std::move(gang);
  Persist(g);
  Notify(g);
  wake_ = true;
  cv_.notify_all();
  return Status::Ok();
}

Status LocalExecutor::Cancel(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = gangs_.find(job_id);
  if (it == gangs_.end()) {
    // An ended gang no longer held in memory: cancelling it is a no-op.
    if (auto dir = LookupJobDir(options_.data_dir, kLocalRegistry, job_id); dir.ok()) {
      if (auto persisted = LoadGangState(*dir);
          persisted.ok() && GangLifecycle::IsTerminal(persisted->gang.state)) {
        return Status::Ok();
      }
    }
    return NotFoundError("job " + job_id + " is not known to this executor");
  }
  Gang& gang = *it->second;
  GangLifecycle lc = Lifecycle(gang);
  GangState before = gang.state;
  bool any_running = std::any_of(gang.replicas.begin(), gang.replicas.end(),
                                 [](const Replica& r) { return r.running; });
  LifecycleAction action = lc.Cancel(any_running, clock_.Now());
  if (action.kind == LifecycleAction::Kind::kNone && gang.state != before) {
    Persist(gang);  // a gang restart under way became a cancel
    Notify(gang);
  }
  Perform(gang, action);
  wake_ = true;
  cv_.notify_all();
  return Status::Ok();
}

StatusOr<GangStatus> LocalExecutor::Get(const std::string& job_id) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = gangs_.find(job_id);
    if (it != gangs_.end()) return StatusOf(*it->second);
  }
  // Not adopted since a restart (e.g. it had ended): answer from its persisted state.
  TY_ASSIGN_OR_RETURN(fs::path job_dir, LookupJobDir(options_.data_dir, kLocalRegistry, job_id));
  TY_ASSIGN_OR_RETURN(PersistedGang persisted, LoadGangState(job_dir));
  return persisted.status;
}

StatusOr<std::vector<LogLine>> LocalExecutor::ReadLogs(const std::string& job_id, int64_t after,
                                                       int limit) const {
  fs::path job_dir;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = gangs_.find(job_id);
    if (it != gangs_.end()) job_dir = it->second->spec.job_dir;
  }
  if (job_dir.empty()) {
    TY_ASSIGN_OR_RETURN(job_dir, LookupJobDir(options_.data_dir, kLocalRegistry, job_id));
  }
  return ReadJobLog(JobLogDir(job_dir), after, limit);
}

void LocalExecutor::Loop() {
  while (true) {
    PollOnce();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, options_.poll_interval, [this] { return stop_ || wake_; });
    if (stop_) return;
  }
}

void LocalExecutor::PollOnce() {
  // poll_mu_ is held while the listener runs: a second pass (the monitor thread and a caller)
  // waits, so each gang's statuses reach the listener in the order they happened.
  std::lock_guard<std::mutex> poll_lock(poll_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_) return;  // exit_watcher_ may be gone: a launch could not be watched
  // Cleared before looking, so an event during the pass makes the next wait return at once.
  wake_ = false;
  Tick();
  if (!listener_) pending_notifications_.clear();  // nobody to tell
  while (!pending_notifications_.empty() && listener_) {
    std::vector<GangStatus> notes = std::move(pending_notifications_);
    pending_notifications_.clear();
    Listener listener = listener_;
    lock.unlock();
    for (const auto& note : notes) listener(note);
    lock.lock();
  }
  // After the listener heard of the ends: e.g. a container's removal.
  std::vector<std::pair<ReplicaRuntime*, ReplicaHandle>> releases = std::move(pending_releases_);
  pending_releases_.clear();
  lock.unlock();
  for (auto& [runtime, handle] : releases) runtime->Release(handle);
}

bool LocalExecutor::WaitForWork(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return stop_ || wake_; });
  return wake_;
}

void LocalExecutor::SyncLoop() {
  std::unique_lock<std::mutex> lock(sync_mu_);
  while (true) {
    sync_cv_.wait(lock, [this] { return sync_stop_ || !pending_fsyncs_.empty(); });
    if (pending_fsyncs_.empty() && sync_stop_) return;
    std::vector<fs::path> paths = std::move(pending_fsyncs_);
    pending_fsyncs_.clear();
    lock.unlock();
    for (const auto& p : paths) (void)FsyncPath(p);  // best effort; the rename already happened
    lock.lock();
  }
}

void LocalExecutor::Tick() {
  // Wrappers end shortly after writing their status file; collect them so none stays a zombie.
  std::erase_if(unreaped_, [](const auto& started) { return started.first->Reap(started.second); });
  for (auto& [id, gang] : gangs_) {
    // Written again once the disk has room (a terminal state durably, as Finished does).
    if (gang->state_unsaved) Persist(*gang, GangLifecycle::IsTerminal(gang->state));
    SayLostLogLines(*gang);  // once the log takes lines again
    if (gang->state == GangState::kQueued || GangLifecycle::IsTerminal(gang->state)) continue;
    for (auto& replica : gang->replicas) PollReplica(*gang, replica);
    AdvanceGang(*gang);
  }
  while (ended_.size() > kMaxEndedInMemory) {
    auto it = gangs_.find(ended_.front());
    if (it != gangs_.end() && GangLifecycle::IsTerminal(it->second->state)) gangs_.erase(it);
    ended_.pop_front();
  }
  for (const Admission& admission : scheduler_.Admit()) {
    auto it = gangs_.find(admission.job_id);
    if (it != gangs_.end()) StartGang(*it->second, admission);
  }
}

}  // namespace trainyard::executor
