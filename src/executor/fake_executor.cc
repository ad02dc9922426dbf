#include "executor/fake_executor.h"

#include <algorithm>

#include "executor/executor_registry.h"
#include "executor/job_log.h"
#include "machines/machine_catalog.h"
#include "replica_contract/replica_contract.h"

namespace trainyard::executor {
namespace {

bool IsTerminal(GangState s) { return GangLifecycle::IsTerminal(s); }

std::vector<ReplicaStatus> InitialReplicas(const GangSpec& spec) {
  std::vector<ReplicaStatus> out;
  for (const auto& r : spec.replicas) {
    ReplicaStatus rs;
    rs.pool_index = r.pool_index;
    rs.replica_index = r.replica_index;
    out.push_back(rs);
  }
  return out;
}

int64_t FakePid(const ReplicaStatus& r) { return 100000 + r.pool_index * 1000 + r.replica_index; }

std::string Describe(const ReplicaStatus& r) {
  return replica_contract::ReplicaDescription(r.pool_index, r.replica_index);
}

}  // namespace

Status RegisterFakeExecutor(ExecutorRegistry* registry) {
  auto running_for = std::make_shared<std::chrono::milliseconds>(0);
  ExecutorBackend backend;
  backend.flags.push_back({"--fake-run-ms", "With --executor fake: how long each job stays RUNNING",
                           true, "0", [running_for](const std::string& value) -> Status {
                             TY_ASSIGN_OR_RETURN(int ms,
                                                 ParseIntFlag("--fake-run-ms", value, 0, 1 << 30));
                             *running_for = std::chrono::milliseconds(ms);
                             return Status::Ok();
                           }});
  backend.create = [running_for](const ExecutorConfig&) -> StatusOr<CreatedExecutor> {
    CreatedExecutor created;
    created.executor =
        std::make_unique<FakeExecutor>(AutoRunOptions{std::chrono::milliseconds(0), *running_for});
    return created;
  };
  return registry->Register("fake", std::move(backend));
}

GangStatus FakeExecutor::StatusOf(const Gang& g) {
  GangStatus st = StatusOfRecord(g.spec.job_id, g.record);
  st.replicas = g.replicas;
  return st;
}

GangLifecycle FakeExecutor::Lifecycle(Gang& g) const {
  return GangLifecycle(&g.record, LifecyclePolicy::From(g.spec, backoff_));
}

std::chrono::system_clock::time_point FakeExecutor::Now() const {
  return clock_ ? clock_->Now() : std::chrono::system_clock::now();
}

FakeExecutor::FakeExecutor(AutoRunOptions auto_run) : auto_run_(auto_run) {
  auto_thread_ = std::thread([this] { AutoRunLoop(); });
}

FakeExecutor::~FakeExecutor() { Shutdown(); }

void FakeExecutor::Shutdown() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  auto_cv_.notify_all();
  if (auto_thread_.joinable()) auto_thread_.join();
}

void FakeExecutor::SetListener(Listener listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

bool FakeExecutor::has_listener() const {
  std::lock_guard lock(mu_);
  return static_cast<bool>(listener_);
}

void FakeExecutor::Notify(const GangStatus& status) {
  Listener l;
  {
    std::lock_guard lock(mu_);
    l = listener_;
  }
  if (l) l(status);
}

Status FakeExecutor::Validate(const GangSpec& spec) const {
  std::lock_guard lock(mu_);
  if (!validate_error_.ok()) return validate_error_;
  if (spec.replicas.empty())
    return InvalidArgumentError("gang " + spec.job_id + " has no replicas");
  for (const auto& r : spec.replicas) {
    if (r.argv.empty() && r.image.empty()) {  // an image runs its own ENTRYPOINT
      return InvalidArgumentError("workerPoolSpecs[" + std::to_string(r.pool_index) +
                                  "]: replica has no command");
    }
    TY_RETURN_IF_ERROR(
        machines::MachineCatalog::Default()
            .Resolve({r.machine_type, r.accelerator_type, r.accelerator_count},
                     "workerPoolSpecs[" + std::to_string(r.pool_index) + "].machineSpec")
            .status());
  }
  return Status::Ok();
}

Status FakeExecutor::Submit(const GangSpec& spec) {
  std::function<void(const GangSpec&)> hook;
  {
    std::lock_guard lock(mu_);
    hook = before_submit_;
  }
  if (hook) hook(spec);
  {
    std::lock_guard lock(mu_);
    if (!submit_error_.ok()) return submit_error_;
    if (gangs_.count(spec.job_id)) return AlreadyExistsError("gang " + spec.job_id + " exists");
    Gang& g = gangs_[spec.job_id];
    g.spec = spec;
    g.replicas = InitialReplicas(spec);
    g.simulated = static_cast<bool>(program_);
    g.sim.resize(spec.replicas.size());
    submitted_.push_back(spec);
    if (auto_run_) auto_queue_.emplace_back(std::chrono::steady_clock::now(), spec.job_id);
  }
  auto_cv_.notify_all();
  return Status::Ok();
}

StatusOr<GangStatus> FakeExecutor::Adopt(const GangSpec& spec) {
  GangStatus status;
  {
    std::lock_guard lock(mu_);
    if (gangs_.count(spec.job_id)) return AlreadyExistsError("gang " + spec.job_id + " exists");
    auto it = adopt_results_.find(spec.job_id);
    if (it != adopt_results_.end() && !it->second.ok()) return it->second.status();
    submitted_.push_back(spec);
    Gang& g = gangs_[spec.job_id];
    g.spec = spec;
    g.replicas = InitialReplicas(spec);
    g.simulated = static_cast<bool>(program_);
    g.sim.resize(spec.replicas.size());
    if (auto logs = adopt_logs_.find(spec.job_id); logs != adopt_logs_.end()) {
      for (auto& line : logs->second) {
        line.offset = next_log_offset_++;
        g.logs.push_back(std::move(line));
      }
      adopt_logs_.erase(logs);
    }
    if (it == adopt_results_.end()) {
      (void)AdvanceLocked(g, GangState::kFailed, "replicas not found after restart",
                          GangFailure::kLostOnAdopt);
    } else {
      (void)AdvanceLocked(g, *it->second, "");
      // Simulated replicas found running keep running (until they are stopped).
      if (g.simulated && !IsTerminal(g.record.state) && g.record.state != GangState::kQueued) {
        for (auto& r : g.sim) {
          r.attempt = std::max(r.attempt, 1);
          r.running = true;
        }
      }
    }
    if (auto_run_ && !IsTerminal(g.record.state)) {
      auto_queue_.emplace_back(std::chrono::steady_clock::now(), spec.job_id);
    }
    status = StatusOf(g);
  }
  auto_cv_.notify_all();
  return status;
}

Status FakeExecutor::Cancel(const std::string& job_id) {
  GangStatus status;
  {
    std::lock_guard lock(mu_);
    auto it = gangs_.find(job_id);
    if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
    cancelled_.push_back(job_id);
    Gang& g = it->second;
    if (IsTerminal(g.record.state)) return Status::Ok();
    bool any_running;
    if (g.simulated) {
      any_running = std::any_of(g.sim.begin(), g.sim.end(), [](auto& r) { return r.running; });
    } else {
      any_running = hold_cancel_ && (g.record.state == GangState::kRunning ||
                                     g.record.state == GangState::kPending);
    }
    Perform(g, Lifecycle(g).Cancel(any_running, Now()), 0);
    status = StatusOf(g);
  }
  Notify(status);
  return Status::Ok();
}

StatusOr<GangStatus> FakeExecutor::Get(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  auto it = gangs_.find(job_id);
  if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
  return StatusOf(it->second);
}

StatusOr<std::vector<LogLine>> FakeExecutor::ReadLogs(const std::string& job_id, int64_t after,
                                                      int limit) const {
  std::lock_guard lock(mu_);
  auto it = gangs_.find(job_id);
  if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
  std::vector<LogLine> out;
  for (const auto& line : it->second.logs) {
    if (line.offset <= after) continue;
    if (static_cast<int>(out.size()) >= limit) break;
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> FakeExecutor::AdmissionNotes(const GangSpec&) const {
  std::lock_guard lock(mu_);
  return admission_notes_;
}
void FakeExecutor::SetAdmissionNotes(std::vector<std::string> notes) {
  std::lock_guard lock(mu_);
  admission_notes_ = std::move(notes);
}
void FakeExecutor::SetValidateError(Status status) {
  std::lock_guard lock(mu_);
  validate_error_ = std::move(status);
}
void FakeExecutor::SetSubmitError(Status status) {
  std::lock_guard lock(mu_);
  submit_error_ = std::move(status);
}
void FakeExecutor::SetAdoptResult(const std::string& job_id, StatusOr<GangState> result) {
  std::lock_guard lock(mu_);
  adopt_results_.insert_or_assign(job_id, std::move(result));
}
void FakeExecutor::SetAdoptLogs(const std::string& job_id, std::vector<LogLine> lines) {
  std::lock_guard lock(mu_);
  adopt_logs_[job_id] = std::move(lines);
}
void FakeExecutor::SetHoldCancel(bool hold) {
  std::lock_guard lock(mu_);
  hold_cancel_ = hold;
}

void FakeExecutor::SetBeforeSubmitHook(std::function<void(const GangSpec&)> hook) {
  std::lock_guard lock(mu_);
  before_submit_ = std::move(hook);
}

Status FakeExecutor::AdvanceLocked(Gang& g, GangState state, std::string error_message,
                                   GangFailure failure) {
  if (IsTerminal(g.record.state)) {
    return FailedPreconditionError("gang " + g.spec.job_id + " already ended");
  }
  GangLifecycle lc = Lifecycle(g);
  auto now = Now();
  switch (state) {
    case GangState::kQueued:
      break;
    case GangState::kPending:
    case GangState::kRunning:
      lc.Placed(state, now);
      break;
    case GangState::kSucceeded:
      if (lc.stopping()) {
        lc.Stopped(now);
      } else {
        lc.Succeeded(/*any_running=*/false, now);
      }
      break;
    case GangState::kFailed:
      lc.EndedElsewhere(GangState::kFailed, error_message, failure, now);
      break;
    case GangState::kCancelling:
      lc.Cancel(/*any_running=*/true, now);
      break;
    case GangState::kCancelled:
      lc.EndedElsewhere(GangState::kCancelled, error_message, GangFailure::kCancelled, now);
      break;
  }
  if (IsTerminal(g.record.state)) {
    for (auto& r : g.replicas) r.pid = 0;
  } else if (g.record.state == GangState::kRunning) {
    for (auto& r : g.replicas) r.pid = FakePid(r);
  }
  return Status::Ok();
}

Status FakeExecutor::Advance(const std::string& job_id, GangState state, std::string error_message,
                             GangFailure failure) {
  GangStatus status;
  {
    std::lock_guard lock(mu_);
    auto it = gangs_.find(job_id);
    if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
    TY_RETURN_IF_ERROR(AdvanceLocked(it->second, state, std::move(error_message), failure));
    status = StatusOf(it->second);
  }
  Notify(status);
  return Status::Ok();
}

Status FakeExecutor::SetReplicaResult(const std::string& job_id, int pool, int replica,
                                      int exit_code, int restarts) {
  std::lock_guard lock(mu_);
  auto it = gangs_.find(job_id);
  if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
  for (auto& r : it->second.replicas) {
    if (r.pool_index == pool && r.replica_index == replica) {
      r.exit_code = exit_code;
      r.restarts = restarts;
      return Status::Ok();
    }
  }
  return NotFoundError("gang " + job_id + " has no replica " + std::to_string(pool) + "-" +
                       std::to_string(replica));
}

Status FakeExecutor::AppendLog(const std::string& job_id, int pool, int replica, std::string text,
                               bool is_stderr) {
  std::lock_guard lock(mu_);
  auto it = gangs_.find(job_id);
  if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
  LogLine line;
  line.offset = next_log_offset_++;
  line.time = std::chrono::system_clock::now();
  line.pool_index = pool;
  line.replica_index = replica;
  line.is_stderr = is_stderr;
  line.text = std::move(text);
  it->second.logs.push_back(std::move(line));
  return Status::Ok();
}

std::vector<GangSpec> FakeExecutor::submitted() const {
  std::lock_guard lock(mu_);
  return submitted_;
}

std::vector<std::string> FakeExecutor::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void FakeExecutor::SetReplicaProgram(FakeReplicaProgram program) {
  std::lock_guard lock(mu_);
  program_ = std::move(program);
}

void FakeExecutor::SetClock(Clock* clock) {
  std::lock_guard lock(mu_);
  clock_ = clock;
}

void FakeExecutor::SetRestartBackoff(RestartBackoff backoff) {
  std::lock_guard lock(mu_);
  backoff_ = backoff;
}

void FakeExecutor::StartReplica(Gang& g, size_t i) {
  SimReplica& r = g.sim[i];
  ReplicaStatus& rs = g.replicas[i];
  r.attempt += 1;
  FakeReplicaRun run = program_(g.spec.replicas[i], r.attempt);
  for (auto& text : run.output) {
    g.logs.push_back(
        {next_log_offset_++, Now(), rs.pool_index, rs.replica_index, false, std::move(text)});
  }
  for (auto& text : run.errors) {
    g.logs.push_back(
        {next_log_offset_++, Now(), rs.pool_index, rs.replica_index, true, std::move(text)});
  }
  r.running = !run.exit_code.has_value();
  r.handled = r.running;
  r.code = run.exit_code;
  r.ended = Now();
  rs.pid = r.running ? FakePid(rs) : 0;
  rs.exit_code = run.exit_code;
  rs.restart_at.reset();
  rs.restart_note.clear();
}

void FakeExecutor::ScheduleRestart(Gang& g, size_t i, std::chrono::system_clock::time_point due) {
  const std::string note = RestartNote(due, Now(), g.record.restarts_used, g.spec.max_restarts);
  for (size_t k = 0; k < g.replicas.size(); ++k) {
    if (i != std::string::npos && k != i) continue;
    g.replicas[k].restart_at = due;
    g.replicas[k].restart_note = note;
  }
  StartDueRestarts(g);
}

void FakeExecutor::StartDueRestarts(Gang& g) {
  for (size_t i = 0; i < g.replicas.size(); ++i) {
    if (!g.replicas[i].restart_at || *g.replicas[i].restart_at > Now()) continue;
    g.replicas[i].restarts += 1;
    StartReplica(g, i);
  }
}

void FakeExecutor::HandleExits(Gang& g) {
  auto now = Now();
  for (size_t i = 0; i < g.sim.size(); ++i) {
    SimReplica& r = g.sim[i];
    if (r.handled || !r.code) continue;
    r.handled = true;
    if (*r.code == 0) continue;
    bool any_running = std::any_of(g.sim.begin(), g.sim.end(), [](auto& x) { return x.running; });
    const ReplicaStatus& rs = g.replicas[i];
    const std::string reason = LastStderrLine(g.logs, rs.pool_index, rs.replica_index);
    const std::string name = Describe(rs);
    Perform(g,
            Lifecycle(g).ReplicaFailed(name, *r.code, ReplicaExitMessage(name, *r.code, reason),
                                       any_running, now, r.ended),
            i);
    if (IsTerminal(g.record.state) || Lifecycle(g).stopping()) return;
  }
  std::vector<std::pair<int, std::optional<int>>> ends;
  for (size_t i = 0; i < g.sim.size(); ++i) {
    ends.push_back({g.replicas[i].pool_index, g.sim[i].running ? std::nullopt : g.sim[i].code});
  }
  if (PrimarySucceeded(ends)) {
    bool any_running = std::any_of(g.sim.begin(), g.sim.end(), [](auto& x) { return x.running; });
    Perform(g, Lifecycle(g).Succeeded(any_running, now), 0);
  }
}

void FakeExecutor::Perform(Gang& g, const LifecycleAction& action, size_t replica) {
  using Kind = LifecycleAction::Kind;
  if (!action.log.empty()) {
    const ReplicaStatus& rs = g.replicas[replica];
    g.logs.push_back({next_log_offset_++, Now(), rs.pool_index, rs.replica_index, true,
                      "[trainyard] " + action.log});
  }
  switch (action.kind) {
    case Kind::kNone:
    case Kind::kKill:  // simulated replicas always honour SIGTERM
      return;
    case Kind::kTerminate:
      if (!g.simulated) return;  // a test ends the stop with Advance
      for (size_t i = 0; i < g.sim.size(); ++i) {
        if (!g.sim[i].running) continue;
        g.sim[i].running = false;
        g.sim[i].handled = true;
        g.sim[i].code = 143;
        g.replicas[i].pid = 0;
        g.replicas[i].exit_code = 143;
      }
      return Perform(g, Lifecycle(g).Stopped(Now()), replica);
    case Kind::kRestartReplica:
      return ScheduleRestart(g, replica, action.not_before.value_or(Now()));
    case Kind::kRestartGang:
      return ScheduleRestart(g, std::string::npos, action.not_before.value_or(Now()));
    case Kind::kFinished:
      for (auto& r : g.replicas) {
        r.pid = 0;
        r.restart_at.reset();
        r.restart_note.clear();
      }
      for (auto& r : g.sim) r.running = false;
      return;
  }
}

void FakeExecutor::Step() {
  std::vector<GangStatus> changed;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, g] : gangs_) {
      if (!g.simulated || IsTerminal(g.record.state)) continue;
      GangStatus before = StatusOf(g);
      GangLifecycle lc = Lifecycle(g);
      if (g.record.state == GangState::kQueued) {
        lc.Placed(GangState::kPending, Now());
      } else if (g.record.state == GangState::kPending) {
        for (size_t i = 0; i < g.sim.size(); ++i) StartReplica(g, i);
        lc.Placed(GangState::kRunning, Now());
      }
      if (g.record.state != GangState::kPending && !lc.stopping()) {
        StartDueRestarts(g);
        HandleExits(g);
      }
      bool any_running = std::any_of(g.sim.begin(), g.sim.end(), [](auto& r) { return r.running; });
      if (g.record.state != GangState::kPending) Perform(g, lc.Tick(any_running, Now()), 0);
      GangStatus after = StatusOf(g);
      if (after.state != before.state || after.replicas.size() != before.replicas.size() ||
          !std::equal(after.replicas.begin(), after.replicas.end(), before.replicas.begin(),
                      [](const ReplicaStatus& a, const ReplicaStatus& b) {
                        return a.pid == b.pid && a.exit_code == b.exit_code &&
                               a.restarts == b.restarts && a.restart_at == b.restart_at;
                      })) {
        changed.push_back(after);
      }
    }
  }
  for (const auto& status : changed) Notify(status);
}

void FakeExecutor::AutoRunLoop() {
  // Each queued entry is one step of one gang, due at its time point.
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (auto_queue_.empty()) {
      auto_cv_.wait(lock);
      continue;
    }
    auto [due, job_id] = auto_queue_.front();
    if (std::chrono::steady_clock::now() < due) {
      auto_cv_.wait_until(lock, due);
      continue;
    }
    auto_queue_.pop_front();
    auto it = gangs_.find(job_id);
    if (it == gangs_.end() || IsTerminal(it->second.record.state) ||
        it->second.record.state == GangState::kCancelling) {
      continue;
    }
    Gang& g = it->second;
    GangState next = GangState::kSucceeded;
    std::chrono::milliseconds wait{0};
    switch (g.record.state) {
      case GangState::kQueued:
        next = GangState::kPending;
        wait = auto_run_->pending_for;
        break;
      case GangState::kPending:
        next = GangState::kRunning;
        wait = auto_run_->running_for;
        break;
      default:
        next = GangState::kSucceeded;
        break;
    }
    (void)AdvanceLocked(g, next, "");
    if (next == GangState::kRunning) {
      for (const auto& r : g.spec.replicas) {
        std::string cmd;
        for (const auto& a : r.argv) cmd += (cmd.empty() ? "" : " ") + a;
        LogLine line{next_log_offset_++,
                     std::chrono::system_clock::now(),
                     r.pool_index,
                     r.replica_index,
                     false,
                     "fake executor: would run " + cmd};
        g.logs.push_back(std::move(line));
      }
    }
    if (next == GangState::kSucceeded) {
      for (auto& r : g.replicas) r.exit_code = 0;
    }
    if (!IsTerminal(next)) {
      auto when = std::chrono::steady_clock::now() + wait;
      auto pos = std::upper_bound(auto_queue_.begin(), auto_queue_.end(), when,
                                  [](auto t, const auto& e) { return t < e.first; });
      auto_queue_.insert(pos, {when, job_id});
    }
    GangStatus status = StatusOf(g);
    Listener l = listener_;
    lock.unlock();
    if (l) l(status);
    lock.lock();
  }
}

}  // namespace trainyard::executor
