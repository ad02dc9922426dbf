#include "controller/tuning_job_controller.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <fstream>
#include <future>
#include <thread>

#include "executor/fake_executor.h"
#include "spec/hyperparameter_tuning_job_json.h"
#include "sqlite/sqlite.h"
#include "store/memory_job_store.h"
#include "store/sqlite_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using executor::GangState;
using nlohmann::json;

constexpr const char* kTuningParent = "projects/p/locations/l";

// Holds a fake searcher's Suggest until the test releases it: a searcher that takes long.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool released = false;

  void Enter() {
    std::unique_lock lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return released; });
  }
  bool WaitEntered() {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return entered; });
  }
  void Release() {
    std::lock_guard lock(mu);
    released = true;
    cv.notify_all();
  }
};

// Proposes nothing; waits at `gate` first when there is one.
class GatedSearcher : public tuning::Searcher {
 public:
  explicit GatedSearcher(Gate* gate) : gate_(gate) {}
  std::string_view Name() const override { return "gated"; }
  StatusOr<tuning::Suggestions> Suggest(int, const tuning::SearchHistory&) override {
    if (gate_ != nullptr) gate_->Enter();
    return tuning::Suggestions{};
  }
  json SaveState() const override { return {{"searcher", "gated"}}; }
  Status RestoreState(const json&) override { return Status::Ok(); }

 private:
  Gate* gate_;
};

auto GatedSearchers(Gate* gate) {
  return [gate](const tuning::StudySpec&, uint64_t) -> std::unique_ptr<tuning::Searcher> {
    return std::make_unique<GatedSearcher>(gate);
  };
}

json StudyBody(int max_trials, int parallel, int max_failed = 0) {
  json body = json::parse(R"({
    "displayName": "toy",
    "studySpec": {
      "metrics": [{"metricId": "objective", "goal": "MAXIMIZE"}],
      "parameters": [
        {"parameterId": "x", "doubleValueSpec": {"minValue": 0, "maxValue": 1}},
        {"parameterId": "opt", "categoricalValueSpec": {"values": ["adam", "sgd"]}}],
      "algorithm": "RANDOM_SEARCH"},
    "trialJobSpec": {
      "workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 1,
                           "containerSpec": {"imageUri": "local", "command": ["obj"],
                                             "args": ["--fixed=1"]}}],
      "baseOutputDirectory": {"outputUriPrefix": "/tmp/out"}}})");
  body["maxTrialCount"] = max_trials;
  body["parallelTrialCount"] = parallel;
  body["maxFailedTrialCount"] = max_failed;
  return body;
}

class TuningJobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }

  // A new controller and service over the same stores, as after a server restart. Jobs that
  // the previous executor had running are re-adopted as running.
  void Restart() {
    std::vector<std::string> running;
    if (executor_) {
      for (const auto& g : executor_->submitted()) {
        auto st = executor_->Get(g.job_id);
        if (st.ok() && st->state == GangState::kRunning) running.push_back(g.job_id);
      }
    }
    tuning_.reset();
    controller_.reset();
    executor_ = std::make_unique<executor::FakeExecutor>();
    for (const auto& id : running) executor_->SetAdoptResult(id, GangState::kRunning);
    controller_ = std::make_unique<controller::JobController>(
        &jobs_, executor_.get(), &images_, nullptr,
        controller::JobControllerOptions{dir_ / "jobs"});
    ASSERT_TRUE(controller_->Start().ok());
    TuningJobControllerOptions o;
    o.poll_interval = std::chrono::milliseconds(0);
    o.seed = 7;
    o.metric_file = [this](const spec::CustomJob& job) { return MetricFile(job.Id()); };
    o.make_searcher = make_searcher_;
    tuning_ = std::make_unique<TuningJobController>(&jobs_, controller_.get(), o);
    ASSERT_TRUE(tuning_->Start().ok());
  }

  std::filesystem::path MetricFile(const std::string& job_id) {
    return dir_ / (job_id + ".metrics");
  }

  // Decodes `body` as the API does, then creates the job.
  StatusOr<spec::HyperparameterTuningJob> Create(const json& body) {
    TY_ASSIGN_OR_RETURN(auto request,
                        spec::HyperparameterTuningJobFromJson(body, spec::DecodeMode::kRequest));
    return tuning_->Create(kTuningParent, std::move(request));
  }

  std::string CreateStudy(const json& body) {
    auto job = Create(body);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? job->name : "";
  }

  json Describe(const std::string& name) {
    auto j = tuning_->Get(name);
    EXPECT_TRUE(j.ok()) << j.status();
    return j.ok() ? spec::HyperparameterTuningJobToJson(*j) : json();
  }

  // Job id of trial `trial_id` (from its customJob name).
  std::string TrialJob(const std::string& name, const std::string& trial_id) {
    for (const auto& t : Describe(name).value("trials", json::array())) {
      if (t["id"] == trial_id) {
        std::string job = t.value("customJob", "");
        return job.substr(job.rfind('/') + 1);
      }
    }
    return "";
  }

  void WriteMetrics(const std::string& job_id, const std::vector<double>& values) {
    std::ofstream out(MetricFile(job_id));
    for (size_t i = 0; i < values.size(); ++i) {
      out << json{{"global_step", std::to_string(i + 1)},
                  {"objective", std::to_string(values[i])},
                  {"timestamp", 1.8e9 + i},
                  {"trial", "1"}}
                 .dump()
          << "\n";
    }
  }

  // "id:STATE:final" for every trial, then the job state.
  std::string Summary(const std::string& name) {
    json j = Describe(name);
    std::string out;
    for (const auto& t : j.value("trials", json::array())) {
      out += t["id"].get<std::string>() + ":" + t["state"].get<std::string>();
      if (t.contains("finalMeasurement")) {
        out += ":" + t["finalMeasurement"]["metrics"][0]["value"].dump();
      }
      out += " ";
    }
    return out + j["state"].get<std::string>();
  }

  std::filesystem::path dir_ = testing::MakeTestDir();
  store::MemoryJobStore jobs_;  // custom jobs and tuning jobs, as in one SQLite database
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  std::unique_ptr<executor::FakeExecutor> executor_;
  std::unique_ptr<controller::JobController> controller_;
  std::unique_ptr<TuningJobController> tuning_;
  TuningJobControllerOptions::SearcherFactory make_searcher_;  // unset: the real searchers
};

TEST_F(TuningJobControllerTest, TrialJobsGetParameterArgsTrialEnvAndPerTrialOutputDir) {
  CreateStudy(StudyBody(4, 2));
  auto gangs = executor_->submitted();
  ASSERT_EQ(gangs.size(), 2u);
  std::string got;
  for (const auto& g : gangs) {
    const auto& argv = g.replicas[0].argv;
    std::string args;
    for (size_t i = 1; i < argv.size(); ++i) {
      args += argv[i].substr(0, argv[i].find('=') + 1) + " ";
    }
    auto job = controller_->Get(g.job_name);
    ASSERT_TRUE(job.ok());
    got += args + "trial=" + g.replicas[0].env.at("CLOUD_ML_TRIAL_ID") +
           " out=" + job->job_spec.base_output_directory +
           " label=" + job->labels["trainyard-trial"] + "\n";
  }
  EXPECT_EQ(got,
            "--fixed= --x= --opt= trial=1 out=/tmp/out/1/ label=1\n"
            "--fixed= --x= --opt= trial=2 out=/tmp/out/2/ label=2\n");
}

// A tuning job's trainyard-priority label orders its trials in the project's queue.
TEST_F(TuningJobControllerTest, TrialsQueueWithTheTuningJobsPriority) {
  json body = StudyBody(2, 2);
  body["labels"] = {{"trainyard-priority", "300"}};
  CreateStudy(body);
  std::string got;
  for (const auto& g : executor_->submitted()) got += std::to_string(g.priority) + " ";
  EXPECT_EQ(got, "300 300 ");
}

TEST_F(TuningJobControllerTest, MetricsFromFileAndStdoutEndTheStudy) {
  std::string name = CreateStudy(StudyBody(2, 2));
  std::string job1 = TrialJob(name, "1"), job2 = TrialJob(name, "2");
  ASSERT_TRUE(executor_->Advance(job1, GangState::kRunning).ok());
  ASSERT_TRUE(executor_->Advance(job2, GangState::kRunning).ok());
  WriteMetrics(job1, {0.25, 0.75});
  ASSERT_TRUE(executor_->AppendLog(job2, 0, 0, "epoch=1 objective=0.5").ok());
  tuning_->PollOnce();
  EXPECT_EQ(Summary(name), "1:ACTIVE 2:ACTIVE JOB_STATE_RUNNING");
  ASSERT_TRUE(executor_->Advance(job1, GangState::kSucceeded).ok());
  ASSERT_TRUE(executor_->Advance(job2, GangState::kSucceeded).ok());
  tuning_->PollOnce();
  EXPECT_EQ(Summary(name), "1:SUCCEEDED:0.75 2:SUCCEEDED:0.5 JOB_STATE_SUCCEEDED");
}

TEST_F(TuningJobControllerTest, FailedTrialsFailTheStudyWithTheReason) {
  std::string name = CreateStudy(StudyBody(4, 1, /*max_failed=*/1));
  std::string job1 = TrialJob(name, "1");
  ASSERT_TRUE(executor_->Advance(job1, GangState::kRunning).ok());
  ASSERT_TRUE(
      executor_->Advance(job1, GangState::kFailed, "workerpool0 replica 0 exited with code 3")
          .ok());
  tuning_->PollOnce();
  json j = Describe(name);
  EXPECT_EQ(j["state"].get<std::string>() + " | " + j["error"]["message"].get<std::string>(),
            "JOB_STATE_FAILED | 1 trial failed (maxFailedTrialCount=1); last: trial 1: "
            "workerpool0 replica 0 exited with code 3");
}

TEST_F(TuningJobControllerTest, CancelStopsRunningTrials) {
  std::string name = CreateStudy(StudyBody(4, 2));
  for (const auto& g : executor_->submitted()) {
    ASSERT_TRUE(executor_->Advance(g.job_id, GangState::kRunning).ok());
  }
  ASSERT_TRUE(tuning_->Cancel(name).ok());
  tuning_->PollOnce();
  EXPECT_EQ(executor_->cancelled().size(), 2u);
  EXPECT_EQ(Summary(name), "1:INFEASIBLE 2:INFEASIBLE JOB_STATE_CANCELLED");
  EXPECT_EQ(tuning_->Cancel(name).code(), StatusCode::kFailedPrecondition);
}

TEST_F(TuningJobControllerTest, RestartResumesTheStudyAndReattachesToRunningTrials) {
  std::string name = CreateStudy(StudyBody(3, 2));
  std::string job1 = TrialJob(name, "1"), job2 = TrialJob(name, "2");
  ASSERT_TRUE(executor_->Advance(job1, GangState::kRunning).ok());
  ASSERT_TRUE(executor_->Advance(job2, GangState::kRunning).ok());
  WriteMetrics(job1, {0.5});
  ASSERT_TRUE(executor_->AppendLog(job2, 0, 0, "objective=0.125").ok());
  tuning_->PollOnce();
  Restart();  // both trial jobs keep running and are re-adopted
  WriteMetrics(job1, {0.5, 0.625});
  ASSERT_TRUE(executor_->Advance(job1, GangState::kSucceeded).ok());
  ASSERT_TRUE(executor_->Advance(job2, GangState::kSucceeded).ok());
  tuning_->PollOnce();  // trial 3 starts
  std::string job3 = TrialJob(name, "3");
  ASSERT_FALSE(job3.empty());
  ASSERT_TRUE(executor_->Advance(job3, GangState::kRunning).ok());
  WriteMetrics(job3, {0.25});
  ASSERT_TRUE(executor_->Advance(job3, GangState::kSucceeded).ok());
  tuning_->PollOnce();
  EXPECT_EQ(Summary(name),
            "1:SUCCEEDED:0.625 2:SUCCEEDED:0.125 3:SUCCEEDED:0.25 JOB_STATE_SUCCEEDED");
}

TEST_F(TuningJobControllerTest, InvalidRequestsNameTheField) {
  json bad_trial = StudyBody(2, 1);
  bad_trial["trialJobSpec"]["workerPoolSpecs"][0]["replicaCount"] = 3;
  json bad_study = StudyBody(2, 1);
  bad_study["studySpec"]["parameters"][0]["doubleValueSpec"]["minValue"] = 5;
  std::string got;
  for (const json& body : {bad_trial, bad_study}) {
    auto r = Create(body);
    got += r.ok() ? "ok" : r.status().message().substr(0, r.status().message().find(':'));
    got += "\n";
  }
  EXPECT_EQ(got,
            "trialJobSpec.workerPoolSpecs[0].replicaCount\n"
            "studySpec.parameters[0].doubleValueSpec.minValue\n");
}

// Issue 43: trials that can never start (an image without a command), and budgets that would
// keep a failing study going for ever, are refused at create, naming the field.
TEST_F(TuningJobControllerTest, UnstartableTrialsAndOversizedBudgetsAreInvalidArguments) {
  json no_command = StudyBody(2, 1);
  no_command["trialJobSpec"]["workerPoolSpecs"][0]["containerSpec"].erase("command");
  std::string got;
  for (const json& body : {no_command, StudyBody(100000000, 1), StudyBody(1001, 1), StudyBody(2, 3),
                           StudyBody(2, 1, /*max_failed=*/3)}) {
    auto r = Create(body);
    got += r.ok() ? "ok"
                  : std::string(StatusCodeName(r.status().code())) + " " +
                        r.status().message().substr(0, r.status().message().find(':'));
    got += "\n";
  }
  EXPECT_EQ(got,
            "INVALID_ARGUMENT trialJobSpec.workerPoolSpecs[0].containerSpec.command\n"
            "INVALID_ARGUMENT maxTrialCount\n"
            "INVALID_ARGUMENT maxTrialCount\n"
            "INVALID_ARGUMENT parallelTrialCount\n"
            "INVALID_ARGUMENT maxFailedTrialCount\n");
}

// Issue 43: a study's runner busy for long (here: a searcher that blocks) held the controller's
// one mutex, so GET and :cancel of it — and every other study — hung. Now they answer at once,
// and the cancel is applied when the searcher returns.
TEST_F(TuningJobControllerTest, GetCancelAndPollReturnWhileTheSearcherBlocks) {
  Gate gate;
  make_searcher_ = GatedSearchers(&gate);
  Restart();
  std::thread create([&] { (void)Create(StudyBody(4, 1)); });
  ASSERT_TRUE(gate.WaitEntered());
  auto page = tuning_->List({kTuningParent, "", 0, ""});  // stored before its first Pump
  const std::string name = page.ok() && !page->jobs.empty() ? page->jobs[0].name : "";
  const auto ready = [](auto& f) {
    return f.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  };
  auto get = std::async(std::launch::async, [&] { return tuning_->Get(name); });
  const bool got = ready(get);
  auto cancel = std::async(std::launch::async, [&] { return tuning_->Cancel(name); });
  auto poll = std::async(std::launch::async, [&] { tuning_->PollOnce(); });
  std::string while_blocked = "GET, cancel or poll hung";
  if (got && ready(cancel) && ready(poll)) {
    while_blocked = cancel.get().ToString() + " " +
                    std::string(spec::JobStateName(get.get()->state)) + " then " +
                    std::string(spec::JobStateName(tuning_->Get(name)->state));
  }
  gate.Release();
  create.join();
  EXPECT_EQ(while_blocked + " | " + std::string(spec::JobStateName(tuning_->Get(name)->state)),
            "OK JOB_STATE_PENDING then JOB_STATE_CANCELLING | JOB_STATE_CANCELLED");
}

// Issue 43: after kill -9 and a restart the runaway study could not be cancelled. A cancel
// recorded while the runner was busy is stored, and a restarted server applies it.
TEST_F(TuningJobControllerTest, ACancelRecordedWhileTheRunnerIsBusySurvivesARestart) {
  Gate gate;
  make_searcher_ = GatedSearchers(&gate);
  Restart();
  std::thread create([&] { (void)Create(StudyBody(4, 1)); });
  ASSERT_TRUE(gate.WaitEntered());
  auto page = tuning_->List({kTuningParent, "", 0, ""});
  const std::string name = page.ok() && !page->jobs.empty() ? page->jobs[0].name : "";
  auto cancel = std::async(std::launch::async, [&] { return tuning_->Cancel(name); });
  const bool answered = cancel.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  // The server is killed here, its runner still busy; the next one starts on the same store.
  TuningJobControllerOptions o;
  o.poll_interval = std::chrono::milliseconds(0);
  o.make_searcher = GatedSearchers(nullptr);
  auto restarted = std::make_unique<TuningJobController>(&jobs_, controller_.get(), o);
  std::string got = answered ? cancel.get().ToString() : "cancel hung";
  if (restarted->Start().ok()) {
    got += " " + std::string(spec::JobStateName(restarted->Get(name)->state));
  }
  gate.Release();
  create.join();
  EXPECT_EQ(got, "OK JOB_STATE_CANCELLED");
}

TEST_F(TuningJobControllerTest, DeleteRemovesEndedStudyAndItsTrialJobs) {
  std::string name = CreateStudy(StudyBody(1, 1));
  std::string job1 = TrialJob(name, "1");
  EXPECT_EQ(tuning_->Delete(name).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(executor_->Advance(job1, GangState::kRunning).ok());
  WriteMetrics(job1, {0.5});
  ASSERT_TRUE(executor_->Advance(job1, GangState::kSucceeded).ok());
  tuning_->PollOnce();
  ASSERT_TRUE(tuning_->Delete(name).ok());
  EXPECT_EQ(tuning_->Get(name).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(controller_->Get(std::string(kTuningParent) + "/customJobs/" + job1).status().code(),
            StatusCode::kNotFound);
}

// hp-tuning-jobs list --filter: the ListCustomJobs filter syntax over tuning jobs, from the store.
TEST_F(TuningJobControllerTest, ListFiltersByStateDisplayNameAndLabels) {
  json a = StudyBody(1, 1);
  a["displayName"] = "bert-lr";
  a["labels"] = {{"team", "nlp"}};
  json b = StudyBody(1, 1);
  b["displayName"] = "resnet";
  b["labels"] = {{"team", "cv"}};
  std::string first = CreateStudy(a);
  std::string second = CreateStudy(b);
  ASSERT_TRUE(tuning_->Cancel(second).ok());
  tuning_->PollOnce();  // its cancelled trial job is seen: CANCELLING -> CANCELLED
  auto names = [&](const std::string& filter) {
    auto page = tuning_->List({kTuningParent, filter, 0, ""});
    if (!page.ok()) return page.status().ToString();
    std::string out;
    for (const auto& j : page->jobs) {
      out += j.display_name + "(" + std::string(spec::JobStateName(j.state)) + ") ";
    }
    return out;
  };
  EXPECT_EQ(names("") + "| " + names("state=JOB_STATE_CANCELLED") + "| " +
                names("display_name:\"bert*\" AND labels.team=nlp") + "| " +
                names("NOT labels.team:*") + "| " + names("statee=1"),
            "resnet(JOB_STATE_CANCELLED) bert-lr(JOB_STATE_RUNNING) | resnet(JOB_STATE_CANCELLED) "
            "| bert-lr(JOB_STATE_RUNNING) | | INVALID_ARGUMENT: filter: unknown field 'statee' at "
            "position 1; filterable fields are state, display_name, create_time, update_time and "
            "labels.KEY");
}

// A data dir written by the StudyService that kept HP-tuning jobs in their own studies.db
// (test/fixtures/studies_db): after the one-time import and Start, GET shows exactly what that
// server showed, and the running study goes on to the end.
TEST(TuningJobControllerMigrationTest, ImportedStudiesReadBackUnchangedAndContinue) {
  const auto dir = testing::MakeTestDir();
  const auto fixture = testing::SourcePath("test/fixtures/studies_db");
  ASSERT_TRUE(
      sqlite::ExecSqlOnFile(dir / "studies.db", testing::ReadFileOrDie(fixture / "studies.sql"))
          .ok());
  ASSERT_TRUE(
      sqlite::ExecSqlOnFile(dir / "jobs.db", testing::ReadFileOrDie(fixture / "jobs.sql")).ok());
  auto store = store::SqliteJobStore::Open(dir / "jobs.db");
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->ImportStudiesDb(dir / "studies.db").ok());
  const json expected = json::parse(testing::ReadFileOrDie(fixture / "expected.json"));
  const std::string job2 = "1795464660268733000", job3 = "1795464660270930000";

  executor::FakeExecutor executor;
  executor.SetAdoptResult(job2, GangState::kRunning);  // trial 2 was running; trial 3 queued
  spec::ImageCatalog images = spec::ImageCatalog::BuiltIn();
  JobController jobs(store->get(), &executor, &images, nullptr, JobControllerOptions{dir / "jobs"});
  ASSERT_TRUE(jobs.Start().ok());
  TuningJobControllerOptions o;
  o.poll_interval = std::chrono::milliseconds(0);
  o.seed = 7;
  TuningJobController tuning(store->get(), &jobs, o);
  ASSERT_TRUE(tuning.Start().ok());
  auto describe = [&](const std::string& which) {
    auto job = tuning.Get(expected[which]["name"].get<std::string>());
    return job.ok() ? spec::HyperparameterTuningJobToJson(*job) : json(job.status().ToString());
  };
  EXPECT_EQ(describe("running").dump(2), expected["running"].dump(2));
  EXPECT_EQ(describe("cancelled").dump(2), expected["cancelled"].dump(2));

  ASSERT_TRUE(executor.Advance(job2, GangState::kSucceeded).ok());
  ASSERT_TRUE(executor.Advance(job3, GangState::kRunning).ok());
  ASSERT_TRUE(executor.AppendLog(job3, 0, 0, "objective=0.375").ok());
  ASSERT_TRUE(executor.Advance(job3, GangState::kSucceeded).ok());
  tuning.PollOnce();
  std::string summary;
  json running = describe("running");
  for (const auto& t : running["trials"]) {
    summary += t["id"].get<std::string>() + ":" + t["state"].get<std::string>() + ":" +
               t["finalMeasurement"]["metrics"][0]["value"].dump() + " ";
  }
  EXPECT_EQ(summary + running["state"].get<std::string>(),
            "1:SUCCEEDED:0.5 2:SUCCEEDED:0.25 3:SUCCEEDED:0.375 JOB_STATE_SUCCEEDED");
}

}  // namespace
}  // namespace trainyard::controller
