// LocalExecutor against a fake clock and fake processes: timeout, grace and kill decisions are
// checked in fake time, so they take milliseconds and no child process is started.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <mutex>
#include <thread>

#include "common/file_util.h"
#include "local_executor/local_executor.h"
#include "local_executor/local_executor_state.h"
#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class FakeClock : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  void Advance(std::chrono::seconds d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }

 private:
  mutable std::mutex mu_;
  std::chrono::system_clock::time_point now_{std::chrono::seconds(1800000000)};
};

// Processes are entries in a table; "signals" are recorded, and a process dies only when the
// test says so (a replica that ignores SIGTERM).
class FakeProcessOps : public ProcessOps {
 public:
  StatusOr<ProcessId> Launch(const LaunchRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    ProcessId id{next_pid_++, 1};
    alive_.insert(id.pid);
    launches_.push_back(request);
    return id;
  }
  bool IsAlive(const ProcessId& id) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return alive_.count(id.pid) > 0;
  }
  ProcessId Identify(int64_t pid) const override { return {pid, 1}; }
  bool Signal(const ProcessId& id, int signal, bool group) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!alive_.count(id.pid)) return false;
    signals_ += (signals_.empty() ? "" : " ") + std::string(signal == SIGKILL ? "KILL" : "TERM") +
                (group ? " -" : " ") + std::to_string(id.pid);
    return true;
  }
  bool Reap(const ProcessId&) override { return true; }
  // An eventfd per process, signalled by Exit (the real one is a pidfd). The executor gets a
  // dup it may close whenever it likes; the fake writes to its own copy.
  StatusOr<int> OpenExitFd(const ProcessId& id) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!exit_fds_enabled_) return ProcessOps::OpenExitFd(id);
    if (!alive_.count(id.pid)) return NotFoundError("gone");
    int fd = ::eventfd(0, EFD_CLOEXEC);
    exit_fds_[id.pid] = fd;
    return ::dup(fd);
  }
  void EnableExitFds() {
    std::lock_guard<std::mutex> lock(mu_);
    exit_fds_enabled_ = true;
  }

  // The wrapper (pid) ends after recording `exit_code` for its replica.
  void Exit(int64_t pid, int exit_code) {
    std::lock_guard<std::mutex> lock(mu_);
    const LaunchRequest& req = launches_.at(pid - 1000);
    for (size_t i = 0; i + 1 < req.argv.size(); ++i) {
      if (req.argv[i] == "--status-file") {
        ASSERT_TRUE(
            WriteFileAtomic(req.argv[i + 1], "{\"exit_code\":" + std::to_string(exit_code) + "}\n")
                .ok());
      }
    }
    alive_.erase(pid);
    if (auto it = exit_fds_.find(pid); it != exit_fds_.end()) {
      uint64_t one = 1;
      ASSERT_EQ(::write(it->second, &one, sizeof(one)), 8);
      ::close(it->second);
      exit_fds_.erase(it);
    }
  }
  std::string signals() const {
    std::lock_guard<std::mutex> lock(mu_);
    return signals_;
  }
  size_t launches() const {
    std::lock_guard<std::mutex> lock(mu_);
    return launches_.size();
  }

 private:
  mutable std::mutex mu_;
  int64_t next_pid_ = 1000;
  std::set<int64_t> alive_;
  std::vector<LaunchRequest> launches_;
  std::string signals_;
  bool exit_fds_enabled_ = false;
  std::map<int64_t, int> exit_fds_;
};

class LocalExecutorFakeWorldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    Make(1ms);
  }

  void Make(std::chrono::milliseconds poll_interval) {
    executor_.reset();
    LocalExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.inventory = HostInventory{4, 16, {}, {}};
    o.poll_interval = poll_interval;
    o.wrapper_path = "/bin/true";  // never run: FakeProcessOps only records launches
    o.clock = &clock_;
    o.process_ops = &ops_;
    executor_ = std::make_unique<LocalExecutor>(o);
  }

  GangSpec Spec() {
    GangSpec spec;
    spec.job_id = "fw";
    spec.job_dir = dir_ / "fw";
    spec.kill_grace = 30s;
    spec.timeout = 600s;
    spec.max_restarts = 0;
    spec.replicas.push_back({0, 0, "n1-standard-4", "", 0, {"/bin/sleep", "1000"}, {}});
    return spec;
  }

  // Waits (real time, bounded) for the executor thread to reach a state.
  std::string StateWhen(std::function<bool(const GangStatus&)> pred) {
    for (int i = 0; i < 2000; ++i) {
      auto s = executor_->Get("fw");
      if (s.ok() && pred(*s)) return GangStateName(s->state);
      std::this_thread::sleep_for(1ms);
    }
    return "stuck in " + GangStateName(executor_->Get("fw")->state);
  }

  fs::path dir_;
  FakeClock clock_;
  FakeProcessOps ops_;
  std::unique_ptr<LocalExecutor> executor_;
};

TEST_F(LocalExecutorFakeWorldTest, TimeoutTermsThenKillsAfterTheGraceInFakeTime) {
  ASSERT_TRUE(executor_->Submit(Spec()).ok());
  EXPECT_EQ(StateWhen([](const GangStatus& s) { return s.state == GangState::kRunning; }),
            "RUNNING");
  clock_.Advance(599s);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ops_.signals(), "");  // not yet
  clock_.Advance(1s);
  for (int i = 0; i < 2000 && ops_.signals().empty(); ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(ops_.signals(), "TERM 1000");  // to the wrapper, which forwards to the group
  clock_.Advance(29s);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ops_.signals(), "TERM 1000");
  clock_.Advance(1s);
  for (int i = 0; i < 2000 && ops_.signals() == "TERM 1000"; ++i) {
    std::this_thread::sleep_for(1ms);
  }
  // The replica's pid is unknown (no pid file), so the wrapper's group is killed.
  EXPECT_EQ(ops_.signals(), "TERM 1000 KILL -1000");
  ops_.Exit(1000, 137);
  GangStatus s;
  EXPECT_EQ(StateWhen([&](const GangStatus& st) {
              s = st;
              return st.state == GangState::kFailed;
            }),
            "FAILED");
  EXPECT_EQ(s.error_message, "timed out after 600s");
  EXPECT_EQ(ops_.launches(), 1u);
}

TEST_F(LocalExecutorFakeWorldTest, ReplicaStopsWithinTheGraceWithoutKill) {
  ASSERT_TRUE(executor_->Submit(Spec()).ok());
  StateWhen([](const GangStatus& s) { return s.state == GangState::kRunning; });
  ASSERT_TRUE(executor_->Cancel("fw").ok());
  EXPECT_EQ(ops_.signals(), "TERM 1000");
  clock_.Advance(10s);
  ops_.Exit(1000, 143);
  EXPECT_EQ(StateWhen([](const GangStatus& s) { return s.state == GangState::kCancelled; }),
            "CANCELLED");
  EXPECT_EQ(ops_.signals(), "TERM 1000");
}

// Submit->RUNNING latency: a replica's exit is handled when its wrapper's exit fd
// fires, not at the next poll. With an hour-long poll interval only that can end the job.
TEST_F(LocalExecutorFakeWorldTest, WrapperExitWakesTheExecutorWithoutAPollTick) {
  ops_.EnableExitFds();
  Make(std::chrono::hours(1));
  ASSERT_TRUE(executor_->Submit(Spec()).ok());  // Submit itself wakes the loop: no tick either
  EXPECT_EQ(StateWhen([](const GangStatus& s) { return s.state == GangState::kRunning; }),
            "RUNNING");
  ops_.Exit(1000, 0);
  EXPECT_EQ(StateWhen([](const GangStatus& s) { return s.state == GangState::kSucceeded; }),
            "SUCCEEDED");
}

}  // namespace
}  // namespace trainyard::executor
