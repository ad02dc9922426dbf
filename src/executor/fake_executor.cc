#include "executor/fake_executor.h"

#include <algorithm>

namespace trainyard::executor {
namespace {

bool IsTerminal(GangState s) {
  return s == GangState::kSucceeded || s == GangState::kFailed || s == GangState::kCancelled;
}

GangStatus InitialStatus(const GangSpec& spec) {
  GangStatus st;
  st.job_id = spec.job_id;
  st.state = GangState::kQueued;
  for (const auto& r : spec.replicas) {
    ReplicaStatus rs;
    rs.pool_index = r.pool_index;
    rs.replica_index = r.replica_index;
    st.replicas.push_back(rs);
  }
  return st;
}

}  // namespace

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
    if (r.argv.empty()) {
      return InvalidArgumentError("workerPoolSpecs[" + std::to_string(r.pool_index) +
                                  "]: replica has no command");
    }
    if (!known_machine_types_.empty() && !known_machine_types_.count(r.machine_type)) {
      return InvalidArgumentError("workerPoolSpecs[" + std::to_string(r.pool_index) +
                                  "].machineSpec.machineType: unknown machine type '" +
                                  r.machine_type + "'");
    }
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
    gangs_[spec.job_id] = Gang{spec, InitialStatus(spec), {}};
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
    Gang gang{spec, InitialStatus(spec), {}};
    auto it = adopt_results_.find(spec.job_id);
    if (it != adopt_results_.end() && !it->second.ok()) return it->second.status();
    submitted_.push_back(spec);
    GangState state = it == adopt_results_.end() ? GangState::kFailed : *it->second;
    gang.status.state = state;
    if (state == GangState::kRunning) gang.status.start_time = std::chrono::system_clock::now();
    if (it == adopt_results_.end()) {
      gang.status.error_message = "replicas not found after restart";
      gang.status.end_time = std::chrono::system_clock::now();
    }
    gangs_[spec.job_id] = gang;
    if (auto_run_ && !IsTerminal(state)) {
      auto_queue_.emplace_back(std::chrono::steady_clock::now(), spec.job_id);
    }
    status = gang.status;
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
    if (IsTerminal(g.status.state)) return Status::Ok();
    bool started = g.status.state == GangState::kRunning || g.status.state == GangState::kPending;
    GangState next = hold_cancel_ && started ? GangState::kCancelling : GangState::kCancelled;
    TY_RETURN_IF_ERROR(AdvanceLocked(g, next, "cancelled by request"));
    status = g.status;
  }
  Notify(status);
  return Status::Ok();
}

StatusOr<GangStatus> FakeExecutor::Get(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  auto it = gangs_.find(job_id);
  if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
  return it->second.status;
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

void FakeExecutor::SetKnownMachineTypes(std::set<std::string> names) {
  std::lock_guard lock(mu_);
  known_machine_types_ = std::move(names);
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
void FakeExecutor::SetHoldCancel(bool hold) {
  std::lock_guard lock(mu_);
  hold_cancel_ = hold;
}

void FakeExecutor::SetBeforeSubmitHook(std::function<void(const GangSpec&)> hook) {
  std::lock_guard lock(mu_);
  before_submit_ = std::move(hook);
}

Status FakeExecutor::AdvanceLocked(Gang& g, GangState state, std::string error_message) {
  if (IsTerminal(g.status.state)) {
    return FailedPreconditionError("gang " + g.spec.job_id + " already ended");
  }
  auto now = std::chrono::system_clock::now();
  g.status.state = state;
  if (state == GangState::kRunning && !g.status.start_time) g.status.start_time = now;
  if (IsTerminal(state)) {
    g.status.end_time = now;
    for (auto& r : g.status.replicas) r.pid = 0;
  }
  if (state == GangState::kFailed || state == GangState::kCancelled) {
    g.status.error_message = std::move(error_message);
  }
  if (state == GangState::kRunning) {
    for (auto& r : g.status.replicas) r.pid = 100000 + r.pool_index * 1000 + r.replica_index;
  }
  return Status::Ok();
}

Status FakeExecutor::Advance(const std::string& job_id, GangState state,
                             std::string error_message) {
  GangStatus status;
  {
    std::lock_guard lock(mu_);
    auto it = gangs_.find(job_id);
    if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
    TY_RETURN_IF_ERROR(AdvanceLocked(it->second, state, std::move(error_message)));
    status = it->second.status;
  }
  Notify(status);
  return Status::Ok();
}

Status FakeExecutor::SetReplicaResult(const std::string& job_id, int pool, int replica,
                                      int exit_code, int restarts) {
  std::lock_guard lock(mu_);
  auto it = gangs_.find(job_id);
  if (it == gangs_.end()) return NotFoundError("gang " + job_id + " not found");
  for (auto& r : it->second.status.replicas) {
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
    if (it == gangs_.end() || IsTerminal(it->second.status.state) ||
        it->second.status.state == GangState::kCancelling) {
      continue;
    }
    Gang& g = it->second;
    GangState next = GangState::kSucceeded;
    std::chrono::milliseconds wait{0};
    switch (g.status.state) {
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
      for (auto& r : g.status.replicas) r.exit_code = 0;
    }
    if (!IsTerminal(next)) {
      auto when = std::chrono::steady_clock::now() + wait;
      auto pos = std::upper_bound(auto_queue_.begin(), auto_queue_.end(), when,
                                  [](auto t, const auto& e) { return t < e.first; });
      auto_queue_.insert(pos, {when, job_id});
    }
    GangStatus status = g.status;
    Listener l = listener_;
    lock.unlock();
    if (l) l(status);
    lock.lock();
  }
}

}  // namespace trainyard::executor
