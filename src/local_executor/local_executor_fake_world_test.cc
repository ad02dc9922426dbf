// LocalExecutor against a fake clock and fake processes: timeout, grace and kill decisions are
// checked in fake time, so they take milliseconds and no child process is started. Most tests
// build the executor without its monitor thread and step it with PollOnce(), so "nothing happened
// yet" is a fact after a pass, not a guess after a sleep.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
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

  // The wrapper (pid) ends after recording `exit_code` for its replica, and `end_time` (a job
  // log time) when given, as the real wrapper does.
  void Exit(int64_t pid, int exit_code, const std::string& end_time = "") {
    std::lock_guard<std::mutex> lock(mu_);
    const LaunchRequest& req = launches_.at(pid - 1000);
    std::string status = "{\"exit_code\":" + std::to_string(exit_code);
    if (!end_time.empty()) status += ",\"end_time\":\"" + end_time + "\"";
    for (size_t i = 0; i + 1 < req.argv.size(); ++i) {
      if (req.argv[i] == "--status-file") {
        ASSERT_TRUE(WriteFileAtomic(req.argv[i + 1], status + "}\n").ok());
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
    Make(/*start_monitor=*/false);
  }

  void Make(bool start_monitor, std::chrono::milliseconds poll_interval = 1ms) {
    executor_.reset();
    LocalExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.inventory = HostInventory{4, 16, {}, {}};
    o.poll_interval = poll_interval;
    o.start_monitor = start_monitor;
    o.wrapper_path = "/bin/true";  // never run: FakeProcessOps only records launches
    o.cgroup.enabled = false;      // no process joins them: real cgroups would be left behind
    o.clock = &clock_;
    o.process_ops = &ops_;
    if (backoff_) o.restart_backoff = *backoff_;
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

  // One PollOnce, then "STATE 'signals sent so far'".
  std::string Poll() {
    executor_->PollOnce();
    return GangStateName(executor_->Get("fw")->state) + " '" + ops_.signals() + "'";
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

  // "RUNNING launches 2 'restarting in 2s (restart 2 of 3)'" after one pass.
  std::string PollRestarts() {
    executor_->PollOnce();
    GangStatus s = *executor_->Get("fw");
    return GangStateName(s.state) + " launches " + std::to_string(ops_.launches()) + " '" +
           s.replicas[0].restart_note + "'";
  }

  fs::path dir_;
  std::optional<RestartBackoff> backoff_;  // unset: the executor's default
  FakeClock clock_;
  FakeProcessOps ops_;
  std::unique_ptr<LocalExecutor> executor_;
};

TEST_F(LocalExecutorFakeWorldTest, TimeoutTermsThenKillsAfterTheGraceInFakeTime) {
  ASSERT_TRUE(executor_->Submit(Spec()).ok());
  std::string seen = GangStateName(executor_->Get("fw")->state);  // nothing moves without a pass
  seen += " | " + Poll();
  clock_.Advance(599s);
  seen += " | 599s: " + Poll();
  clock_.Advance(1s);
  seen += " | 600s: " + Poll();  // TERM to the wrapper, which forwards it to the group
  clock_.Advance(29s);
  seen += " | +29s: " + Poll();
  clock_.Advance(1s);
  // The replica's pid is unknown (no pid file), so the wrapper's group is killed.
  seen += " | +30s: " + Poll();
  ops_.Exit(1000, 137);
  seen += " | exit: " + Poll();
  EXPECT_EQ(seen + " " + executor_->Get("fw")->error_message + " | launches " +
                std::to_string(ops_.launches()),
            "QUEUED | RUNNING '' | 599s: RUNNING '' | 600s: RUNNING 'TERM 1000' | +29s: RUNNING "
            "'TERM 1000' | +30s: RUNNING 'TERM 1000 KILL -1000' | exit: FAILED 'TERM 1000 KILL "
            "-1000' timed out after 600s | launches 1");
}

TEST_F(LocalExecutorFakeWorldTest, ReplicaStopsWithinTheGraceWithoutKill) {
  ASSERT_TRUE(executor_->Submit(Spec()).ok());
  executor_->PollOnce();
  ASSERT_TRUE(executor_->Cancel("fw").ok());
  std::string seen = GangStateName(executor_->Get("fw")->state) + " '" + ops_.signals() + "'";
  clock_.Advance(10s);
  seen += " | 10s: " + Poll();
  ops_.Exit(1000, 143);
  seen += " | exit: " + Poll();
  EXPECT_EQ(seen,
            "CANCELLING 'TERM 1000' | 10s: CANCELLING 'TERM 1000' | exit: CANCELLED 'TERM 1000'");
}

// WaitForWork returns as soon as a supervisor's exit fd fires, so a caller stepping the executor
// needs no sleep to see an exit; with nothing to do it returns false after its timeout.
TEST_F(LocalExecutorFakeWorldTest, WaitForWorkReturnsWhenASupervisorExits) {
  ops_.EnableExitFds();
  ASSERT_TRUE(executor_->Submit(Spec()).ok());
  std::string seen = "submitted: " + std::to_string(executor_->WaitForWork(0ms));
  seen += " " + Poll();
  seen += " | idle: " + std::to_string(executor_->WaitForWork(1ms));
  ops_.Exit(1000, 0);
  seen += " | exited: " + std::to_string(executor_->WaitForWork(std::chrono::minutes(1)));
  seen += " " + Poll();
  EXPECT_EQ(seen, "submitted: 1 RUNNING '' | idle: 0 | exited: 1 SUCCEEDED ''");
}

// PollOnce from other threads while the monitor runs: passes do not overlap, so the listener
// sees the gang's states in the order they happened.
TEST_F(LocalExecutorFakeWorldTest, PollOnceBesideTheMonitorKeepsNotificationsInOrder) {
  Make(/*start_monitor=*/true);
  std::mutex mu;
  std::string states;
  executor_->SetListener([&](const GangStatus& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (states.empty() || !states.ends_with(GangStateName(s.state))) {
      states += (states.empty() ? "" : " ") + GangStateName(s.state);
    }
  });
  std::atomic<bool> done = false;
  std::vector<std::thread> pollers;
  for (int i = 0; i < 2; ++i) {
    pollers.emplace_back([&] {
      while (!done) executor_->PollOnce();
    });
  }
  ASSERT_TRUE(executor_->Submit(Spec()).ok());
  StateWhen([](const GangStatus& s) { return s.state == GangState::kRunning; });
  ops_.Exit(1000, 0);
  StateWhen([](const GangStatus& s) { return s.state == GangState::kSucceeded; });
  executor_->PollOnce();  // the last pass has handed its notes over
  done = true;
  for (auto& t : pollers) t.join();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(states, "QUEUED PENDING RUNNING SUCCEEDED");
}

// Submit->RUNNING latency: a replica's exit is handled when its wrapper's exit fd
// fires, not at the next poll. With an hour-long poll interval only that can end the job.
TEST_F(LocalExecutorFakeWorldTest, WrapperExitWakesTheExecutorWithoutAPollTick) {
  ops_.EnableExitFds();
  Make(/*start_monitor=*/true, std::chrono::hours(1));
  ASSERT_TRUE(executor_->Submit(Spec()).ok());  // Submit itself wakes the loop: no tick either
  EXPECT_EQ(StateWhen([](const GangStatus& s) { return s.state == GangState::kRunning; }),
            "RUNNING");
  ops_.Exit(1000, 0);
  EXPECT_EQ(StateWhen([](const GangStatus& s) { return s.state == GangState::kSucceeded; }),
            "SUCCEEDED");
}

// Issue #45: a crash-looping replica used its 3 restarts in ~30 ms. Now restart k waits
// 1s * 2^(k-1) from the exit: three quick failures are spaced 1, 2 and 4 s, and the replica's
// status says what it waits for.
TEST_F(LocalExecutorFakeWorldTest, RestartsOfACrashLoopAreSpacedOneTwoFourSeconds) {
  GangSpec spec = Spec();
  spec.max_restarts = 3;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  executor_->PollOnce();
  std::string seen;
  for (int k = 0; k < 3; ++k) {
    ops_.Exit(1000 + k, 2);
    seen += PollRestarts() + " |";
    const int wait = 1 << k;
    if (wait > 1) {
      clock_.Advance(std::chrono::seconds(wait - 1));
      seen += " +" + std::to_string(wait - 1) + "s: " + PollRestarts() + " |";
    }
    clock_.Advance(1s);
    seen += " +" + std::to_string(wait) + "s: " + PollRestarts() + "\n";
  }
  EXPECT_EQ(seen,
            "RUNNING launches 1 'restarting in 1s (restart 1 of 3)' | +1s: RUNNING launches 2 ''\n"
            "RUNNING launches 2 'restarting in 2s (restart 2 of 3)' | +1s: RUNNING launches 2 "
            "'restarting in 2s (restart 2 of 3)' | +2s: RUNNING launches 3 ''\n"
            "RUNNING launches 3 'restarting in 4s (restart 3 of 3)' | +3s: RUNNING launches 3 "
            "'restarting in 4s (restart 3 of 3)' | +4s: RUNNING launches 4 ''\n");
}

TEST_F(LocalExecutorFakeWorldTest, CancelDuringTheBackoffEndsTheJobAtOnce) {
  GangSpec spec = Spec();
  spec.max_restarts = 3;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  executor_->PollOnce();
  ops_.Exit(1000, 2);
  std::string seen = PollRestarts();
  ASSERT_TRUE(executor_->Cancel("fw").ok());
  seen += " | cancel: " + GangStateName(executor_->Get("fw")->state);
  clock_.Advance(10s);
  seen += " | +10s: " + PollRestarts();
  EXPECT_EQ(seen,
            "RUNNING launches 1 'restarting in 1s (restart 1 of 3)' | cancel: CANCELLED | +10s: "
            "CANCELLED launches 1 ''");
}

// The wait is in executor_state.json: a server restart during it neither restarts the replica
// at once nor forgets it.
TEST_F(LocalExecutorFakeWorldTest, AdoptDuringTheBackoffKeepsTheSchedule) {
  backoff_ = RestartBackoff{10s, 300s};
  Make(/*start_monitor=*/false);
  GangSpec spec = Spec();
  spec.max_restarts = 3;
  ASSERT_TRUE(executor_->Submit(spec).ok());
  executor_->PollOnce();
  ops_.Exit(1000, 2, FormatLogTime(clock_.Now()));
  std::string seen = PollRestarts();
  clock_.Advance(4s);
  Make(/*start_monitor=*/false);  // the server restarts 4 s into the wait
  auto adopted = executor_->Adopt(spec);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  seen += " | adopted: " + PollRestarts();
  clock_.Advance(5s);
  seen += " | +9s: " + PollRestarts();
  clock_.Advance(1s);
  seen += " | +10s: " + PollRestarts();
  EXPECT_EQ(seen,
            "RUNNING launches 1 'restarting in 10s (restart 1 of 3)' | adopted: RUNNING launches 1 "
            "'restarting in 10s (restart 1 of 3)' | +9s: RUNNING launches 1 'restarting in 10s "
            "(restart 1 of 3)' | +10s: RUNNING launches 2 ''");
}

// Issue #45: a job whose replica exited while the server was down ended then, not when the
// restarted server found it (its endTime is the wrapper's exit time).
TEST_F(LocalExecutorFakeWorldTest, AGangThatEndedWhileTheServerWasDownEndsAtTheExit) {
  GangSpec spec = Spec();
  spec.timeout.reset();  // down for an hour: past Spec()'s timeout
  ASSERT_TRUE(executor_->Submit(spec).ok());
  executor_->PollOnce();
  const auto started = clock_.Now();
  executor_.reset();  // the server stops
  clock_.Advance(5s);
  ops_.Exit(1000, 0, FormatLogTime(clock_.Now()));
  clock_.Advance(3600s);
  Make(/*start_monitor=*/false);
  auto adopted = executor_->Adopt(spec);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_EQ(GangStateName(adopted->state) + " ended +" +
                std::to_string((*adopted->end_time - started) / 1s) + "s, stored +" +
                std::to_string((*executor_->Get("fw")->end_time - started) / 1s) + "s",
            "SUCCEEDED ended +5s, stored +5s")
      << adopted->error_message;
}

// A job that succeeded before its timeout while the server was down, adopted after the deadline
// had passed, succeeded: its exits count before the clock.
TEST_F(LocalExecutorFakeWorldTest, AGangThatSucceededBeforeItsDeadlineWhileDownSucceeds) {
  GangSpec spec = Spec();
  ASSERT_TRUE(spec.timeout.has_value());
  ASSERT_TRUE(executor_->Submit(spec).ok());
  executor_->PollOnce();
  executor_.reset();  // the server stops
  clock_.Advance(1s);
  ops_.Exit(1000, 0, FormatLogTime(clock_.Now()));
  clock_.Advance(*spec.timeout + 3600s);
  Make(/*start_monitor=*/false);
  auto adopted = executor_->Adopt(spec);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_EQ(GangStateName(adopted->state) + " " + adopted->error_message, "SUCCEEDED ");
}

// Issue #46: a 1-CPU job of teamb waited 30 s behind 30 jobs of teama. With fair share it starts
// in the first pass after a CPU frees.
TEST_F(LocalExecutorFakeWorldTest, AnotherProjectsJobStartsInTheFirstPassAfterABurstFreesACpu) {
  auto spec = [this](const std::string& project, int i) {
    GangSpec s = Spec();
    s.job_id = project + std::to_string(i);
    s.job_dir = dir_ / s.job_id;
    s.project = project;
    s.replicas[0].machine_type = "n1-standard-1";
    return s;
  };
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(executor_->Submit(spec("teama", i)).ok());
  executor_->PollOnce();
  ASSERT_TRUE(executor_->Submit(spec("teamb", 0)).ok());
  executor_->PollOnce();
  const std::string before = GangStateName(executor_->Get("teamb0")->state);
  ops_.Exit(1000, 0);  // teama0 ends
  executor_->PollOnce();
  EXPECT_EQ(before + " " + GangStateName(executor_->Get("teamb0")->state) + " " +
                GangStateName(executor_->Get("teama4")->state),
            "QUEUED RUNNING QUEUED");
}

}  // namespace
}  // namespace trainyard::executor
