#include "tuning/study_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <set>

#include "tuning/study_spec_json.h"

namespace trainyard::tuning {
namespace {

constexpr char kJob[] = R"({
  "displayName": "sim", "maxTrialCount": 14, "parallelTrialCount": 3, "maxFailedTrialCount": 3,
  "studySpec": {
    "metrics": [{"metricId": "acc", "goal": "MAXIMIZE"}],
    "parameters": [
      {"parameterId": "lr", "doubleValueSpec": {"minValue": 1e-4, "maxValue": 1e-1}, "scaleType": "UNIT_LOG_SCALE"},
      {"parameterId": "layers", "integerValueSpec": {"minValue": 1, "maxValue": 4}}],
    "medianAutomatedStoppingSpec": {}
  },
  "trialJobSpec": {"workerPoolSpecs": []}})";

HyperparameterTuningJobSpec Job(const char* text = kJob) {
  return *ParseHyperparameterTuningJobSpec(nlohmann::json::parse(text));
}

// Final accuracy of a simulated training run: best at lr = 1e-2, layers = 3.
double FinalAcc(const Trial& t) {
  const double lr = std::get<double>(*FindParameter(t.parameters, "lr"));
  const double layers =
      static_cast<double>(std::get<int64_t>(*FindParameter(t.parameters, "layers")));
  const double d = std::log10(lr) + 2;
  return 0.9 - 0.1 * d * d - 0.02 * (layers - 3) * (layers - 3);
}

// Records what the runner asks for; the test plays the executor.
class FakeLauncher : public TrialLauncher {
 public:
  Status StartTrial(const Trial& trial, const TrialLaunch& launch) override {
    started.push_back(trial.id);
    launches.push_back(launch);
    running.insert(trial.id);
    max_running = std::max(max_running, static_cast<int>(running.size()));
    if (trial.id == fail_start_of) return UnavailableError("no capacity for trial " + trial.id);
    return Status::Ok();
  }
  void StopTrial(const std::string& id) override { stop_requests.insert(id); }

  std::vector<std::string> started;
  std::vector<TrialLaunch> launches;
  std::set<std::string> running;
  std::set<std::string> stop_requests;
  int max_running = 0;
  std::string fail_start_of;
};

StudyRunnerOptions Options(int* ticks) {
  StudyRunnerOptions o;
  o.seed = 77;
  o.clock = [ticks] {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000 + (*ticks)++));
  };
  return o;
}

// Plays 5-step trainings round-robin over the running trials. Trial 4's job crashes at step 2.
// With `restart_at` >= 0, the runner is saved to text and rebuilt after that many events.
std::string Simulate(int restart_at, FakeLauncher* launcher, std::unique_ptr<StudyRunner>* out) {
  int ticks = 0;
  auto runner = std::move(*StudyRunner::Create(Job(), launcher, Options(&ticks)));
  EXPECT_TRUE(runner->Pump().ok());
  std::map<std::string, int> step;
  int events = 0;
  while (runner->state() == StudyState::kRunning) {
    std::vector<std::string> ids;
    for (const Trial& t : runner->trials()) {
      if (t.state == TrialState::kActive || t.state == TrialState::kStopping) ids.push_back(t.id);
    }
    EXPECT_FALSE(ids.empty());
    if (ids.empty()) break;
    for (const std::string& id : ids) {
      const Trial* t = nullptr;
      for (const Trial& c : runner->trials()) {
        if (c.id == id) t = &c;
      }
      if (t == nullptr || (t->state != TrialState::kActive && t->state != TrialState::kStopping))
        continue;
      if (++events == restart_at) {
        const std::string saved = runner->SaveState().dump();
        runner.reset();
        auto restored =
            StudyRunner::Restore(nlohmann::json::parse(saved), launcher, Options(&ticks));
        EXPECT_TRUE(restored.ok()) << restored.status();
        runner = std::move(*restored);
        for (const Trial& c : runner->trials()) {
          if (c.id == id) t = &c;
        }
      }
      const int s = ++step[id];
      if (t->state == TrialState::kStopping) {  // the job honours SIGTERM: exits 143
        launcher->running.erase(id);
        EXPECT_TRUE(runner->OnTrialEnded(id, {false, "terminated by SIGTERM"}).ok());
        continue;
      }
      if (id == "4" && s == 2) {
        launcher->running.erase(id);
        EXPECT_TRUE(
            runner->OnTrialEnded(id, {false, "workerpool0 replica 0 exited with code 1"}).ok());
        continue;
      }
      std::vector<Measurement> ms = t->measurements;
      Measurement m;
      m.step_count = s * 100;
      m.metrics = {{"acc", FinalAcc(*t) * (1 - std::exp(-s / 1.5))}};
      ms.push_back(m);
      EXPECT_TRUE(runner->UpdateMeasurements(id, ms).ok());
      if (s == 5) {
        launcher->running.erase(id);
        EXPECT_TRUE(runner->OnTrialEnded(id, {true, ""}).ok());
      }
    }
  }
  std::string final_state = runner->SaveState().dump();
  *out = std::move(runner);
  return final_state;
}

TEST(StudyRunnerTest, RunsParallelTrialsCountsFailuresAndStopsEarly) {
  FakeLauncher launcher;
  std::unique_ptr<StudyRunner> runner;
  Simulate(-1, &launcher, &runner);
  EXPECT_EQ(runner->state(), StudyState::kSucceeded) << runner->error();
  EXPECT_EQ(runner->trials().size(), 14u);
  EXPECT_EQ(launcher.max_running, 3);
  EXPECT_EQ(runner->failed_trial_count(), 1);
  int succeeded = 0, early = 0;
  for (const Trial& t : runner->trials()) {
    if (t.id == "4") {
      EXPECT_EQ(t.state, TrialState::kInfeasible);
      EXPECT_TRUE(t.job_failed);
      EXPECT_EQ(t.infeasible_reason, "workerpool0 replica 0 exited with code 1");
      continue;
    }
    EXPECT_EQ(t.state, TrialState::kSucceeded) << t.id;
    ++succeeded;
    if (t.early_stopped) {
      ++early;
      EXPECT_TRUE(launcher.stop_requests.count(t.id));
      EXPECT_LT(t.measurements.size(), 5u);
      EXPECT_EQ(t.stop_reason.rfind("median automated stopping:", 0), 0u) << t.stop_reason;
    }
  }
  EXPECT_EQ(succeeded, 13);
  EXPECT_GE(early, 1);
  // The best trial is near the simulated optimum.
  EXPECT_GT(runner->BestTrial()->final_measurement->Metric("acc").value(), 0.85);
}

TEST(StudyRunnerTest, RestoreFromSavedStateMidStudyContinuesIdentically) {
  FakeLauncher a, b;
  std::unique_ptr<StudyRunner> ra, rb;
  const std::string uninterrupted = Simulate(-1, &a, &ra);
  const std::string restarted = Simulate(23, &b, &rb);
  EXPECT_EQ(restarted, uninterrupted);
  EXPECT_EQ(a.started, b.started);
}

TEST(StudyRunnerTest, AnUnsetFailureBudgetSaysWhatWasChosen) {
  FakeLauncher launcher;
  int ticks = 0;
  HyperparameterTuningJobSpec job = Job();
  job.max_failed_trial_count = 0;  // Vertex: the service decides
  auto runner = std::move(*StudyRunner::Create(job, &launcher, Options(&ticks)));
  ASSERT_TRUE(runner->Pump().ok());
  for (const char* id : {"1", "2", "3"}) {
    ASSERT_TRUE(runner->OnTrialEnded(id, {false, "exit code 2"}).ok());
  }
  EXPECT_EQ(runner->error(),
            "3 trials failed (maxFailedTrialCount is unset, so the study stops after 3 failed of "
            "14 trials; set --max-failed-trial-count to allow more); last: trial 3: exit code 2");
}

TEST(StudyRunnerTest, FailsTheStudyWhenTheFailureBudgetIsSpent) {
  FakeLauncher launcher;
  int ticks = 0;
  auto runner = std::move(*StudyRunner::Create(Job(), &launcher, Options(&ticks)));
  ASSERT_TRUE(runner->Pump().ok());
  launcher.fail_start_of = "5";  // a start failure counts too
  ASSERT_TRUE(runner->OnTrialEnded("1", {false, "exit code 2"}).ok());
  ASSERT_TRUE(runner->OnTrialEnded("2", {false, "exit code 2"}).ok());
  EXPECT_EQ(runner->state(), StudyState::kFailed);
  EXPECT_EQ(runner->error(),
            "3 trials failed (maxFailedTrialCount=3); last: trial 5: could not start the trial's "
            "job: UNAVAILABLE: no capacity for trial 5");
  // The trials still running were asked to stop; their later end is recorded, not counted.
  EXPECT_EQ(launcher.stop_requests, (std::set<std::string>{"3", "4"}));
  ASSERT_TRUE(runner->OnTrialEnded("3", {false, "terminated"}).ok());
  EXPECT_EQ(runner->failed_trial_count(), 3);
  EXPECT_EQ(runner->trials()[2].state, TrialState::kInfeasible);
}

// Issue 43: a study whose every start failed spent its whole failure budget (25,000,000) inside
// one Pump, holding the controller's lock. Now one call is one round: parallelTrialCount starts.
TEST(StudyRunnerTest, PumpDoesOneRoundWhenEveryStartFails) {
  class FailingLauncher : public TrialLauncher {
   public:
    Status StartTrial(const Trial&, const TrialLaunch&) override {
      return FailedPreconditionError("no command");
    }
    void StopTrial(const std::string&) override {}
  } launcher;
  nlohmann::json job = nlohmann::json::parse(kJob);
  job["maxTrialCount"] = 1000;
  job["maxFailedTrialCount"] = 1000;
  job["parallelTrialCount"] = 2;
  int ticks = 0;
  auto runner =
      std::move(*StudyRunner::Create(Job(job.dump().c_str()), &launcher, Options(&ticks)));
  std::string got;
  for (int call = 0; call < 3; ++call) {
    ASSERT_TRUE(runner->Pump().ok());
    got += std::to_string(runner->trials().size()) + "/" +
           std::to_string(runner->failed_trial_count()) + " ";
  }
  EXPECT_EQ(got + std::string(StudyStateName(runner->state())), "2/2 4/4 6/6 RUNNING");
}

TEST(StudyRunnerTest, TrialsGetFlagsAndTrialIdAndGridEndsWhenExhausted) {
  FakeLauncher launcher;
  int ticks = 0;
  auto runner = std::move(*StudyRunner::Create(Job(R"({
    "displayName": "grid", "maxTrialCount": 10, "parallelTrialCount": 2,
    "studySpec": {"metrics": [{"metricId": "acc", "goal": "MAXIMIZE"}], "algorithm": "GRID_SEARCH",
      "parameters": [{"parameterId": "lr", "discreteValueSpec": {"values": [0.001, 0.01]}},
                     {"parameterId": "opt", "categoricalValueSpec": {"values": ["adam"]}}]}})"),
                                               &launcher, Options(&ticks)));
  ASSERT_TRUE(runner->Pump().ok());
  ASSERT_EQ(launcher.launches.size(), 2u);
  EXPECT_EQ(launcher.launches[1].args, (std::vector<std::string>{"--lr=0.01", "--opt=adam"}));
  EXPECT_EQ(launcher.launches[1].env.at("CLOUD_ML_TRIAL_ID"), "2");
  Measurement m{std::nullopt, 1, {{"acc", 0.5}}};
  ASSERT_TRUE(runner->UpdateMeasurements("1", {m}).ok());
  ASSERT_TRUE(runner->OnTrialEnded("1", {true, ""}).ok());
  EXPECT_EQ(runner->state(), StudyState::kRunning);
  ASSERT_TRUE(runner->OnTrialEnded("2", {true, ""}).ok());  // no metric: INFEASIBLE, not failed
  EXPECT_EQ(runner->state(), StudyState::kSucceeded);       // the 2-point grid is done before 10
  EXPECT_EQ(runner->trials().size(), 2u);
  EXPECT_EQ(runner->trials()[1].state, TrialState::kInfeasible);
  EXPECT_EQ(runner->failed_trial_count(), 0);
  EXPECT_EQ(runner->trials()[1].infeasible_reason,
            "the trial ended without reporting metric \"acc\" (report it with cloudml-hypertune "
            "or print acc=<value>)");
}

}  // namespace
}  // namespace trainyard::tuning
