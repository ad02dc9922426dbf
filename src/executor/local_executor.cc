#include "executor/local_executor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/file_util.h"
#include "executor/local_executor_state.h"
#include "executor/replica_env.h"

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

// A free TCP port on `host`, chosen by the kernel. Another process may take it before the replica
// binds it; on one host that race is rare and the replica then fails and is restarted.
}  // namespace

StatusOr<int> PickFreeTcpPort(const std::string& host) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return UnavailableError("cannot create a socket to pick a port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    socklen_t len = sizeof(addr);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      port = ntohs(addr.sin_port);
  }
  ::close(fd);
  if (port <= 0) return UnavailableError("cannot pick a free TCP port on " + host);
  return port;
}

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

bool SafeJobId(const std::string& id) {
  if (id.empty() || id == "." || id == ".." || id.size() > 200) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

StatusOr<fs::path> FindExecWrapper(const fs::path& configured) {
  constexpr char kName[] = "trainyard-exec-wrapper";
  std::vector<fs::path> tried;
  auto usable = [&](const fs::path& p) {
    tried.push_back(p);
    return !p.empty() && ::access(p.c_str(), X_OK) == 0;
  };
  if (!configured.empty()) {
    if (usable(configured)) return configured;
    return NotFoundError("exec wrapper " + configured.string() + " is not an executable file");
  }
  if (const char* env = std::getenv("TRAINYARD_EXEC_WRAPPER"); env && *env) {
    if (usable(env)) return fs::path(env);
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && usable(self.parent_path() / kName)) return self.parent_path() / kName;
#ifdef TRAINYARD_EXEC_WRAPPER_BUILD_PATH
  if (usable(TRAINYARD_EXEC_WRAPPER_BUILD_PATH)) return fs::path(TRAINYARD_EXEC_WRAPPER_BUILD_PATH);
#endif
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      if (!dir.empty() && usable(fs::path(dir) / kName)) return fs::path(dir) / kName;
    }
  }
  std::string list;
  for (const auto& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  return NotFoundError(std::string(kName) + " not found (tried " + list +
                       "); build it or set TRAINYARD_EXEC_WRAPPER");
}

LocalExecutor::LocalExecutor(LocalExecutorOptions options)
    : options_(std::move(options)),
      catalog_(options_.catalog ? *options_.catalog : MachineCatalog::Default()),
      clock_(options_.clock ? *options_.clock : Clock::Real()),
      ops_(options_.process_ops ? *options_.process_ops : ProcessOps::Real()),
      inventory_(options_.inventory
                     ? *options_.inventory
                     : DetectHostInventory({options_.cpus, options_.memory_gib, options_.gpus},
                                           &inventory_warnings_)),
      scheduler_([this] {
        SchedulerCapacity cap{static_cast<double>(inventory_.cpus), inventory_.memory_gib, {}};
        for (const auto& g : inventory_.gpus) cap.gpu_indices.push_back(g.index);
        return cap;
      }()) {
  sync_thread_ = std::thread([this] { SyncLoop(); });
  thread_ = std::thread([this] { Loop(); });
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
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(sync_mu_);
    sync_stop_ = true;
  }
  sync_cv_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();
}

Status LocalExecutor::Validate(const GangSpec& spec) const {
  std::vector<ReplicaDemand> demands;
  std::vector<std::string> warnings;
  return ValidateLocked(spec, &demands, &warnings);
}

Status LocalExecutor::ValidateLocked(const GangSpec& spec, std::vector<ReplicaDemand>* demands,
                                     std::vector<std::string>* warnings) const {
  if (!SafeJobId(spec.job_id)) {
    return InvalidArgumentError("job id '" + spec.job_id +
                                "' must be 1-200 characters of letters, digits, '-', '_' or '.'");
  }
  if (spec.job_dir.empty()) return InvalidArgumentError("job " + spec.job_id + ": empty job_dir");
  if (spec.replicas.empty()) {
    return InvalidArgumentError(
        "workerPoolSpecs: the job has no replicas; workerPoolSpecs[0] "
        "needs replicaCount 1");
  }
  if (spec.max_restarts < 0) return InvalidArgumentError("max_restarts must be >= 0");
  if (spec.timeout && spec.timeout->count() <= 0) {
    return InvalidArgumentError("scheduling.timeout must be positive");
  }
  EnvMap env = InheritedReplicaEnv();
  std::set<std::pair<int, int>> seen;
  int total_gpus = 0;
  for (const auto& r : spec.replicas) {
    std::string field = PoolField(r.pool_index);
    if (r.pool_index < 0 || r.pool_index > 3) {
      return InvalidArgumentError(field + ": Vertex has worker pools 0-3 only");
    }
    if (!seen.insert({r.pool_index, r.replica_index}).second || r.replica_index < 0) {
      return InvalidArgumentError(field + ": replica index " + std::to_string(r.replica_index) +
                                  " is negative or appears twice");
    }
    const MachineType* machine = catalog_.FindMachine(r.machine_type);
    if (machine == nullptr) {
      std::string names;
      for (const auto& n : catalog_.MachineNames()) names += (names.empty() ? "" : ", ") + n;
      return InvalidArgumentError(field + ".machineSpec.machineType: unknown machine type '" +
                                  r.machine_type + "'; use one of " + names);
    }
    std::string accel = r.accelerator_type;
    int count = r.accelerator_count;
    if (count < 0) {
      return InvalidArgumentError(field + ".machineSpec.acceleratorCount: must be >= 0, got " +
                                  std::to_string(count));
    }
    if (machine->bundled_accelerator_count > 0) {
      if (accel.empty() && count == 0) {
        accel = machine->bundled_accelerator;
        count = machine->bundled_accelerator_count;
      } else if ((!accel.empty() && accel != machine->bundled_accelerator) ||
                 (count != 0 && count != machine->bundled_accelerator_count)) {
        return InvalidArgumentError(field + ".machineSpec: " + machine->name + " comes with " +
                                    std::to_string(machine->bundled_accelerator_count) + " x " +
                                    machine->bundled_accelerator + "; set acceleratorType " +
                                    machine->bundled_accelerator + " and acceleratorCount " +
                                    std::to_string(machine->bundled_accelerator_count) +
                                    " (or leave both unset)");
      }
      if (count == 0) count = machine->bundled_accelerator_count;
    }
    if (!accel.empty() && catalog_.FindAccelerator(accel) == nullptr) {
      std::string names;
      for (const auto& n : catalog_.AcceleratorNames()) names += (names.empty() ? "" : ", ") + n;
      return InvalidArgumentError(field + ".machineSpec.acceleratorType: unknown accelerator '" +
                                  accel + "'; use one of " + names);
    }
    if (accel.empty() && count > 0) {
      return InvalidArgumentError(field + ".machineSpec.acceleratorType: acceleratorCount is " +
                                  std::to_string(count) + " but no acceleratorType is set");
    }
    if (!accel.empty() && count == 0) {
      return InvalidArgumentError(field +
                                  ".machineSpec.acceleratorCount: must be >= 1 when "
                                  "acceleratorType " +
                                  accel + " is set");
    }
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
    if (r.argv.empty() || r.argv[0].empty()) {
      return InvalidArgumentError(field +
                                  ": no command to run (containerSpec.command/args or an "
                                  "image mapped to a command)");
    }
    EnvMap replica_env = env;
    for (const auto& [k, v] : r.env) replica_env[k] = v;
    if (!ResolvableCommand(r.argv[0], replica_env)) {
      return InvalidArgumentError(field + ": command '" + r.argv[0] +
                                  "' is not an executable on this host's PATH");
    }
    std::string task = TaskName(r.pool_index, r.replica_index);
    if (machine->vcpus > inventory_.cpus || machine->memory_gib > inventory_.memory_gib) {
      warnings->push_back(
          task + ": " + machine->name + " asks for " + std::to_string(machine->vcpus) +
          " vCPUs / " + FormatNumber(machine->memory_gib) + " GiB but this host has " +
          std::to_string(inventory_.cpus) + " vCPUs / " + FormatNumber(inventory_.memory_gib) +
          " GiB; it runs taking the whole host (oversubscribed)");
    }
    demands->push_back({static_cast<double>(machine->vcpus), machine->memory_gib, count});
  }
  return Status::Ok();
}

Status LocalExecutor::Submit(const GangSpec& spec) {
  // A missing wrapper is a broken installation, not a missing job: FAILED_PRECONDITION.
  auto wrapper_or = FindExecWrapper(options_.wrapper_path);
  if (!wrapper_or.ok()) return FailedPreconditionError(wrapper_or.status().message());
  fs::path wrapper = *wrapper_or;
  std::lock_guard<std::mutex> lock(mu_);
  return SubmitLocked(spec, wrapper, /*readopting=*/false);
}

Status LocalExecutor::SubmitLocked(const GangSpec& spec, const fs::path& wrapper, bool readopting) {
  if (gangs_.count(spec.job_id) > 0 ||
      (!readopting && LookupJobDir(options_.data_dir, spec.job_id).ok())) {
    return AlreadyExistsError("job " + spec.job_id + " was already submitted");
  }
  auto gang = std::make_unique<Gang>();
  TY_RETURN_IF_ERROR(ValidateLocked(spec, &gang->demands, &gang->warnings));
  bool clamped = false;
  TY_RETURN_IF_ERROR(scheduler_.Enqueue(spec.job_id, gang->demands, &clamped));
  if (clamped) {
    gang->warnings.push_back(
        "the job's replicas together ask for more CPU or memory than this "
        "host has (" +
        inventory_.ToString() + "); it starts once the host is idle and takes all of it");
  }
  gang->spec = spec;
  // The wrapper runs in the replica's work dir: every path it gets must be absolute.
  gang->spec.job_dir = fs::absolute(spec.job_dir);
  gang->wrapper = fs::absolute(wrapper);
  for (const auto& r : spec.replicas) {
    Replica rep;
    rep.pool_index = r.pool_index;
    rep.replica_index = r.replica_index;
    gang->replicas.push_back(std::move(rep));
  }
  if (Status s = RegisterJobDir(options_.data_dir, spec.job_id, gang->spec.job_dir); !s.ok()) {
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
    if (auto dir = LookupJobDir(options_.data_dir, job_id); dir.ok()) {
      if (auto persisted = LoadGangState(*dir);
          persisted.ok() && persisted->gang.phase == Phase::kDone) {
        return Status::Ok();
      }
    }
    return NotFoundError("job " + job_id + " is not known to this executor");
  }
  Gang& gang = *it->second;
  switch (gang.phase) {
    case Phase::kDone:
      return Status::Ok();
    case Phase::kQueued:
      Finish(gang, GangState::kCancelled, "cancelled before it started");
      break;
    case Phase::kRunning:
      BeginStop(gang, StopGoal::kCancel, "cancelled");
      break;
    case Phase::kStopping:
      if (gang.stop_goal == StopGoal::kRestartGang) {
        gang.stop_goal = StopGoal::kCancel;
        gang.stop_message = "cancelled";
        gang.state = GangState::kCancelling;
        Persist(gang);
        Notify(gang);
      }
      break;
  }
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
  TY_ASSIGN_OR_RETURN(fs::path job_dir, LookupJobDir(options_.data_dir, job_id));
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
    TY_ASSIGN_OR_RETURN(job_dir, LookupJobDir(options_.data_dir, job_id));
  }
  return ReadJobLog(job_dir / "logs", after, limit);
}

void LocalExecutor::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
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
    cv_.wait_for(lock, options_.poll_interval, [this] { return stop_ || wake_; });
  }
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
  std::erase_if(unreaped_, [this](const ProcessId& id) { return ops_.Reap(id); });
  for (auto& [id, gang] : gangs_) {
    if (gang->phase != Phase::kRunning && gang->phase != Phase::kStopping) continue;
    for (auto& replica : gang->replicas) PollReplica(*gang, replica);
    AdvanceGang(*gang);
  }
  while (ended_.size() > kMaxEndedInMemory) {
    auto it = gangs_.find(ended_.front());
    if (it != gangs_.end() && it->second->phase == Phase::kDone) gangs_.erase(it);
    ended_.pop_front();
  }
  for (const Admission& admission : scheduler_.Admit()) {
    auto it = gangs_.find(admission.job_id);
    if (it != gangs_.end()) StartGang(*it->second, admission.gpus);
  }
}

}  // namespace trainyard::executor
