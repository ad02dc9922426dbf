// The executor conformance suite against the LocalExecutor: real /bin/sh replicas through the
// real trainyard-exec-wrapper on a 4-CPU inventory (one n1-standard-4 gang at a time) with 8
// configured GPUs (any model). No monitor thread: each Step is one PollOnce, and the executor's
// clock is a SteppedClock that moves one second whenever the replicas have been quiet for
// kQuiet of real time (see Step). Timeouts and kill_grace in real time are covered by
// local_executor_test.cc.
#include "executor/executor_conformance.h"
#include "local_executor/local_executor.h"
#include "machines/gpu_model.h"
#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

// Single-quoted for sh.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class LocalHarness : public ExecutorHarness {
 public:
  explicit LocalHarness(std::filesystem::path dir) : dir_(std::move(dir)) {}

  std::unique_ptr<Executor> Make() override {
    LocalExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.inventory = HostInventory{4, 16, {}, {}};
    for (int i = 0; i < 8; ++i)
      o.inventory->gpus.push_back({i, std::string(machines::kAnyGpuModel), 0});
    o.wrapper_path = testing::ToolPath("trainyard-exec-wrapper");
    o.clock = &clock_;
    o.start_monitor = false;
    auto e = std::make_unique<LocalExecutor>(o);
    current_ = e.get();
    return e;
  }

  // The attempt number is 1 + the attempts that ended before it: the wrapper's
  // replicas/<task>/attempt-<n>.status files (local_executor.h; the work dir is work/<task>). A
  // count the replica kept itself would miss an attempt stopped before its first line ran (a
  // chief stopped by a gang restart the moment it started), and the next attempt would redo it.
  std::vector<std::string> Command(const ReplicaPlan& plan) override {
    std::string script =
        "n=1; for f in \"../../replicas/${PWD##*/}\"/attempt-*.status; do "
        "[ -e \"$f\" ] && n=$((n + 1)); done; ";
    if (!plan.print.empty()) script += "echo " + Quote(plan.print) + "; ";
    if (!plan.error.empty()) script += "echo " + Quote(plan.error) + " >&2; ";
    script += "case $n in ";
    for (size_t i = 0; i < plan.attempts.size(); ++i) {
      bool last = i + 1 == plan.attempts.size();
      script += last ? std::string("*) ") : std::to_string(i + 1) + ") ";
      script += plan.attempts[i] == ReplicaPlan::kUntilStopped
                    ? "while true; do sleep 0.05; done ;; "
                    : "exit " + std::to_string(plan.attempts[i]) + " ;; ";
    }
    script += "esac";
    return {"/bin/sh", "-c", script};
  }

  // Waits for the next thing the executor reacts to (a submit, a cancel, a supervisor's exit,
  // seen through its pidfd), then runs one pass. Replicas are real processes: when none of them
  // ends within kQuiet, a second of executor time passes instead, which is what moves timeouts
  // and kill_grace on. A replica sent SIGTERM exits well within kQuiet, so a stop ends within
  // the grace; where it does not (a slow machine, or a SIGTERM that reached the wrapper while it
  // was starting the replica and was lost), the replica is SIGKILLed, and the outcomes the suite
  // checks stay the same.
  void Step() override {
    if (!current_->WaitForWork(kQuiet)) clock_.Advance();
    current_->PollOnce();
  }
  std::chrono::system_clock::time_point Now() override { return clock_.Now(); }

 private:
  static constexpr std::chrono::milliseconds kQuiet{100};

  std::filesystem::path dir_;
  SteppedClock clock_;  // survives Make(): a server restart keeps the time
  LocalExecutor* current_ = nullptr;
};

INSTANTIATE_TEST_SUITE_P(Local, ExecutorConformanceTest,
                         ::testing::Values([](const std::filesystem::path& dir) {
                           return std::unique_ptr<ExecutorHarness>(new LocalHarness(dir));
                         }));

}  // namespace
}  // namespace trainyard::executor
