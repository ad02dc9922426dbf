// The executor conformance suite against the FakeExecutor with simulated replicas on a fake
// clock (one second per step).
#include <map>

#include "executor/executor_conformance.h"
#include "executor/fake_executor.h"

namespace trainyard::executor {
namespace {

FakeReplicaRun Run(const ReplicaSpec& replica, int attempt) {
  auto plan = DecodeReplicaPlan(replica.argv);
  if (!plan) return {{"not a conformance replica"}, 127, {}};
  FakeReplicaRun run;
  if (!plan->print.empty()) run.output.push_back(plan->print);
  if (!plan->error.empty()) run.errors.push_back(plan->error);
  int code = PlannedExit(*plan, attempt);
  if (code != ReplicaPlan::kUntilStopped) run.exit_code = code;
  return run;
}

// A "server restart" makes a new FakeExecutor that is told what the old one had: gangs found
// running, ended ones with their outcome, and their logs.
class FakeHarness : public ExecutorHarness {
 public:
  std::unique_ptr<Executor> Make() override {
    auto fake = std::make_unique<FakeExecutor>();
    fake->SetClock(&clock_);
    fake->SetReplicaProgram(Run);
    if (current_ != nullptr) {
      for (const auto& spec : current_->submitted()) {
        auto s = current_->Get(spec.job_id);
        if (!s.ok()) continue;
        fake->SetAdoptResult(spec.job_id, s->state);
        fake->SetAdoptLogs(spec.job_id, *current_->ReadLogs(spec.job_id, -1, 100000));
      }
    }
    current_ = fake.get();
    return fake;
  }
  std::vector<std::string> Command(const ReplicaPlan& plan) override {
    return EncodeReplicaPlan(plan);
  }
  void Step() override {
    clock_.Advance();
    current_->Step();
  }
  std::chrono::system_clock::time_point Now() override { return clock_.Now(); }

 private:
  SteppedClock clock_;
  FakeExecutor* current_ = nullptr;
};

INSTANTIATE_TEST_SUITE_P(Fake, ExecutorConformanceTest,
                         ::testing::Values([](const std::filesystem::path&) {
                           return std::unique_ptr<ExecutorHarness>(new FakeHarness());
                         }));

}  // namespace
}  // namespace trainyard::executor
