// FakeContainerEngine: containers in memory, for tests of code that drives a ContainerEngine
// (executors, the replica runtime). Nothing is started; a test decides when a container exits
// (Exit) and what it printed (SetOutput). SIGTERM and SIGKILL end a running container with
// 128+signal unless IgnoreSigterm(name) was called (a PID 1 without a SIGTERM handler).
//
// Thread-safety: every method locks one mutex; safe from any thread.
#pragma once

#include <map>
#include <mutex>
#include <set>

#include "container/container_engine.h"

namespace trainyard::container {

class FakeContainerEngine : public ContainerEngine {
 public:
  // Images Pull() finds; any other image fails with NOT_FOUND.
  void AddImage(const std::string& image);
  void Exit(const std::string& name, int exit_code, bool oom_killed = false);
  void SetOutput(const std::string& name, const std::string& output);
  void IgnoreSigterm(const std::string& name);
  // The spec a container was started with (precondition: it was started).
  ContainerSpec SpecOf(const std::string& name) const;
  // Signals sent to a container, in order.
  std::vector<int> SignalsOf(const std::string& name) const;
  // Every container ever run, including removed ones, in start order.
  std::vector<std::string> History() const;

  Status Pull(const std::string& image, PullPolicy policy, const LineSink& progress) override;
  Status Run(const ContainerSpec& spec) override;
  StatusOr<ContainerState> Inspect(const std::string& name) override;
  Status Signal(const std::string& name, int signal) override;
  Status Stop(const std::string& name, std::chrono::milliseconds grace) override;
  StatusOr<ContainerState> Wait(const std::string& name,
                                std::chrono::milliseconds timeout) override;
  StatusOr<std::unique_ptr<LogFollower>> FollowLogs(const std::string& name,
                                                    const std::filesystem::path& output_file,
                                                    const std::string& since) override;
  Status Remove(const std::string& name) override;
  StatusOr<std::vector<std::string>> ListJob(const std::string& job_id) override;

 private:
  struct Container {
    ContainerSpec spec;
    ContainerState state;
    std::string output;
    bool ignore_sigterm = false;
    std::vector<int> signals;
  };
  void ExitLocked(Container& c, int exit_code, bool oom_killed);

  mutable std::mutex mu_;
  std::set<std::string> images_;
  std::map<std::string, Container> containers_;
  std::map<std::string, std::vector<int>> signals_;  // survives Remove
  std::map<std::string, ContainerSpec> specs_;       // survives Remove
  std::vector<std::string> history_;
  int64_t next_pid_ = 1000;
};

}  // namespace trainyard::container
