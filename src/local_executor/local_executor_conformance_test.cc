// The executor conformance suite against the LocalExecutor: real /bin/sh replicas through the
// real trainyard-exec-wrapper on a 4-CPU inventory (one n1-standard-4 gang at a time) with 8
// configured GPUs (any model), real time.
#include <thread>

#include "executor/executor_conformance.h"
#include "local_executor/local_executor.h"
#include "machines/gpu_model.h"
#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

using namespace std::chrono_literals;

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
    o.poll_interval = 20ms;
    o.wrapper_path = testing::ToolPath("trainyard-exec-wrapper");
    return std::make_unique<LocalExecutor>(o);
  }

  // The attempt number is counted in a file in the replica's work dir, which survives restarts.
  std::vector<std::string> Command(const ReplicaPlan& plan) override {
    std::string script =
        "n=$(( $(cat .attempts 2>/dev/null || echo 0) + 1 )); echo $n > .attempts; ";
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

  void Step() override { std::this_thread::sleep_for(25ms); }

 private:
  std::filesystem::path dir_;
};

INSTANTIATE_TEST_SUITE_P(Local, ExecutorConformanceTest,
                         ::testing::Values([](const std::filesystem::path& dir) {
                           return std::unique_ptr<ExecutorHarness>(new LocalHarness(dir));
                         }));

}  // namespace
}  // namespace trainyard::executor
