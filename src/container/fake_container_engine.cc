#include "container/fake_container_engine.h"

#include <signal.h>

#include <fstream>

namespace trainyard::container {

void FakeContainerEngine::AddImage(const std::string& image) {
  std::lock_guard<std::mutex> lock(mu_);
  images_.insert(image);
}

void FakeContainerEngine::ExitLocked(Container& c, int exit_code, bool oom_killed) {
  if (c.state.status == ContainerStatus::kExited) return;
  c.state.status = ContainerStatus::kExited;
  c.state.exit_code = exit_code;
  c.state.oom_killed = oom_killed;
  c.state.pid = 0;
  c.state.conmon_pid = 0;
  c.state.finished_at = "2026-01-01T00:00:01Z";
}

void FakeContainerEngine::Exit(const std::string& name, int exit_code, bool oom_killed) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = containers_.find(name);
  if (it != containers_.end()) ExitLocked(it->second, exit_code, oom_killed);
}

void FakeContainerEngine::SetOutput(const std::string& name, const std::string& output) {
  std::lock_guard<std::mutex> lock(mu_);
  containers_[name].output = output;
}

void FakeContainerEngine::IgnoreSigterm(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  containers_[name].ignore_sigterm = true;
}

ContainerSpec FakeContainerEngine::SpecOf(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = specs_.find(name);
  return it == specs_.end() ? ContainerSpec{} : it->second;
}

std::vector<int> FakeContainerEngine::SignalsOf(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = signals_.find(name);
  return it == signals_.end() ? std::vector<int>{} : it->second;
}

std::vector<std::string> FakeContainerEngine::History() const {
  std::lock_guard<std::mutex> lock(mu_);
  return history_;
}

Status FakeContainerEngine::Pull(const std::string& image, PullPolicy, const LineSink& progress) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!images_.contains(image)) {
    return NotFoundError("pulling image '" + image + "' failed: no such image in its registry");
  }
  if (progress) progress("pulled " + image);
  return Status::Ok();
}

Status FakeContainerEngine::Run(const ContainerSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (spec.name.empty() || spec.image.empty()) {
    return InvalidArgumentError("container spec needs a name and an image");
  }
  if (!images_.contains(spec.image)) return NotFoundError("image " + spec.image + " not pulled");
  auto it = containers_.find(spec.name);
  // A SetOutput/IgnoreSigterm before Run leaves a kMissing placeholder to fill in.
  bool placeholder =
      it != containers_.end() && it->second.state.status == ContainerStatus::kMissing;
  if (it != containers_.end() && !placeholder && !spec.replace_existing) {
    return AlreadyExistsError("container " + spec.name + " already exists");
  }
  Container& c = containers_[spec.name];
  c.spec = spec;
  c.state = ContainerState{};
  c.state.status = ContainerStatus::kRunning;
  c.state.pid = next_pid_++;
  c.state.conmon_pid = next_pid_++;
  c.state.started_at = "2026-01-01T00:00:00Z";
  specs_[spec.name] = spec;
  history_.push_back(spec.name);
  return Status::Ok();
}

StatusOr<ContainerState> FakeContainerEngine::Inspect(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = containers_.find(name);
  return it == containers_.end() ? ContainerState{} : it->second.state;
}

Status FakeContainerEngine::Signal(const std::string& name, int signal) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = containers_.find(name);
  if (it == containers_.end() || it->second.state.status == ContainerStatus::kMissing) {
    return NotFoundError("container " + name + ": no such container");
  }
  Container& c = it->second;
  if (c.state.status != ContainerStatus::kRunning) return Status::Ok();
  c.signals.push_back(signal);
  signals_[name].push_back(signal);
  if (signal == SIGKILL || (signal == SIGTERM && !c.ignore_sigterm)) {
    ExitLocked(c, 128 + signal, false);
  }
  return Status::Ok();
}

Status FakeContainerEngine::Stop(const std::string& name, std::chrono::milliseconds) {
  TY_ASSIGN_OR_RETURN(ContainerState state, Inspect(name));
  if (state.status != ContainerStatus::kRunning) return Status::Ok();
  TY_RETURN_IF_ERROR(Signal(name, SIGTERM));
  TY_ASSIGN_OR_RETURN(state, Inspect(name));
  if (state.status == ContainerStatus::kRunning) return Signal(name, SIGKILL);
  return Status::Ok();
}

StatusOr<ContainerState> FakeContainerEngine::Wait(const std::string& name,
                                                   std::chrono::milliseconds timeout) {
  TY_ASSIGN_OR_RETURN(ContainerState state, Inspect(name));
  if (state.status == ContainerStatus::kMissing) {
    return NotFoundError("container " + name + ": no such container");
  }
  if (state.status == ContainerStatus::kRunning) {
    return DeadlineExceededError("container " + name + " still runs after " +
                                 std::to_string(timeout.count()) + " ms");
  }
  return state;
}

StatusOr<std::unique_ptr<LogFollower>> FakeContainerEngine::FollowLogs(
    const std::string& name, const std::filesystem::path& output_file, const std::string&) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = containers_.find(name);
  if (it == containers_.end()) return NotFoundError("container " + name + ": no such container");
  std::ofstream out(output_file, std::ios::app);
  out << it->second.output;
  class Finished : public LogFollower {
   public:
    bool Done() override { return true; }
    bool Wait(std::chrono::milliseconds) override { return true; }
    void Stop() override {}
  };
  return std::unique_ptr<LogFollower>(new Finished());
}

Status FakeContainerEngine::Remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  containers_.erase(name);
  return Status::Ok();
}

StatusOr<std::vector<std::string>> FakeContainerEngine::ListJob(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, c] : containers_) {
    if (c.state.status != ContainerStatus::kMissing && c.spec.job_id == job_id) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace trainyard::container
