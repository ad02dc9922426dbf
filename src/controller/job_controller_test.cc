#include "controller/job_controller.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <set>

#include "common/bucket_path.h"
#include "executor/fake_executor.h"
#include "executor/job_dir_layout.h"
#include "spec/custom_job_json.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using executor::GangState;
using nlohmann::json;
using spec::CustomJob;
using spec::JobState;

constexpr const char* kParent = "projects/p/locations/l";

// A fixed clock the test moves by hand.
struct FakeClock {
  std::chrono::system_clock::time_point now =
      std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
};

class JobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }

  // A new controller over the same store (a server restart), with a fresh executor; replicas run
  // as `users` say (nullptr: the server's user).
  void Restart(const ReplicaUsers* users = nullptr,
               JobControllerOptions options = JobControllerOptions{}, bool drained = false) {
    executor_ = std::make_unique<executor::FakeExecutor>();
    options.jobs_dir = dir_ / "jobs";
    options.replica_users = users;
    controller_ = std::make_unique<JobController>(
        &store_, executor_.get(), &images_,
        [](const spec::MachineSpec& m) -> std::optional<double> {
          if (m.machine_type != "n1-standard-4") return std::nullopt;
          return 0.24 + (m.accelerator_type == "NVIDIA_TESLA_T4" ? 0.40 * m.accelerator_count : 0);
        },
        options, [this] { return clock_.now; });
    if (drained) controller_->SetDraining(true);
    ASSERT_TRUE(controller_->Start().ok());
  }

  // A one-replica job request whose baseOutputDirectory is `base`.
  static std::string JobWithBase(const std::string& base) {
    return R"({"displayName":"out","jobSpec":{"baseOutputDirectory":{"outputUriPrefix":")" + base +
           R"("},"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},
           "replicaCount":"1","containerSpec":{"imageUri":"local","command":["true"]}}]}})";
  }

  StatusOr<CustomJob> Create(const std::string& json) {
    auto req = spec::ParseCustomJob(json, spec::DecodeMode::kRequest);
    if (!req.ok()) return req.status();
    return controller_->Create(kParent, *req);
  }

  CustomJob MustCreate(const std::string& json = kJob) {
    auto job = Create(json);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : CustomJob{};
  }

  std::string State(const CustomJob& job) {
    auto got = controller_->Get(job.name);
    return got.ok() ? std::string(spec::JobStateName(got->state)) : got.status().ToString();
  }

  static constexpr const char* kJob = R"({"displayName":"bert","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4","acceleratorType":"NVIDIA_TESLA_T4",
                      "acceleratorCount":1},
       "replicaCount":"1","containerSpec":{"imageUri":"trainyard/bert-sentiment","args":["--epochs=1"]}},
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"2",
       "containerSpec":{"imageUri":"local","command":["python3","w.py"]}}],
      "scheduling":{"timeout":"90.5s"}}})";

  std::filesystem::path dir_ = testing::MakeTestDir();
  FakeClock clock_;
  store::MemoryJobStore store_;
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  std::unique_ptr<executor::FakeExecutor> executor_;
  std::unique_ptr<JobController> controller_;
};

TEST_F(JobControllerTest, CreateStoresQueuedJobAndSubmitsTheGang) {
  CustomJob job = MustCreate();
  auto gangs = executor_->submitted();
  ASSERT_EQ(gangs.size(), 1u);
  const auto& g = gangs[0];
  std::string replicas;
  for (const auto& r : g.replicas) {
    replicas += std::to_string(r.pool_index) + "-" + std::to_string(r.replica_index) + ":" +
                r.argv[0] + " ";
  }
  EXPECT_EQ(std::string(spec::JobStateName(job.state)) + " " + State(job) + " " + g.job_id + " " +
                std::to_string(g.timeout->count()) + "s " + replicas +
                g.job_dir.filename().string(),
            "JOB_STATE_QUEUED JOB_STATE_QUEUED " + job.Id() +
                " 91s 0-0:trainyard-bert 1-0:python3 1-1:python3 " + job.Id());
}

TEST_F(JobControllerTest, TheGangCarriesTheStoredJobSpecForTheReplicaEnv) {
  CustomJob job = MustCreate();
  const auto spec = nlohmann::json::parse(executor_->submitted().at(0).job_spec_json);
  const auto& pool = spec["workerPoolSpecs"][1];
  EXPECT_EQ(pool["replicaCount"].dump() + " " + pool["diskSpec"]["bootDiskType"].dump() + " " +
                spec["scheduling"]["timeout"].dump(),
            R"("2" "pd-ssd" "90.5s")");
}

// One replica restarts alone; a gang of several restarts as a whole (data parallelism cannot
// take back one replaced member); disableRetries means no restart at all.
TEST_F(JobControllerTest, MultiReplicaJobsRestartAsAWholeGang) {
  auto policy = [this](const std::string& json) {
    MustCreate(json);
    const auto& g = executor_->submitted().back();
    return std::to_string(g.replicas.size()) + ":" + std::to_string(g.max_restarts) +
           (g.restart_job_on_worker_restart ? ":gang" : ":replica");
  };
  const std::string single = R"({"displayName":"one","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
       "containerSpec":{"imageUri":"local","command":["true"]}}]}})";
  std::string no_retries = kJob;
  no_retries.replace(no_retries.find(R"("timeout":"90.5s")"), 17,
                     R"("timeout":"90.5s","disableRetries":true)");
  EXPECT_EQ(policy(single) + " " + policy(kJob) + " " + policy(no_retries),
            "1:3:replica 3:3:gang 3:0:replica");
}

TEST_F(JobControllerTest, AnImageOutsideTheCatalogReachesTheExecutorAsAContainer) {
  auto job = Create(R"({"displayName":"x","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
       "containerSpec":{"imageUri":"eu.gcr.io/p/own:dev","args":["--epochs=1"]}}]}})");
  ASSERT_TRUE(job.ok()) << job.status();
  const auto gangs = executor_->submitted();
  const auto& r = gangs.at(0).replicas.at(0);
  EXPECT_EQ(r.image + " " + r.image_field + " " + (r.command ? "command" : "-") + " " +
                (r.args ? r.args->at(0) : "-") + " argv=" + std::to_string(r.argv.size()),
            "eu.gcr.io/p/own:dev containerSpec.imageUri - --epochs=1 argv=0");
}

// The job's project and serviceAccount choose the replicas' Unix user (replica_users.h); an
// unmapped serviceAccount is refused before anything is stored.
TEST_F(JobControllerTest, ServiceAccountsResolveToTheGangsUserOrAreRefused) {
  testing::WriteFileOrDie(dir_ / "accounts.json",
                          R"({"projects":{"p":{"serviceAccounts":{"sa@p.iam":"alice"}}}})");
  ReplicaUsersOptions o;
  o.table_file = dir_ / "accounts.json";
  o.server_uid = 0;
  o.server_user = "root";
  o.lookup = [](const std::string& user) -> StatusOr<executor::RunAs> {
    if (user == "alice")
      return executor::RunAs{"alice", 1000, 1000, {}, "/home/alice", std::nullopt};
    if (user == "nobody") return executor::RunAs{"nobody", 65534, 65534, {}, "/", std::nullopt};
    return NotFoundError("no user " + user);
  };
  auto users = ReplicaUsers::Load(o);
  ASSERT_TRUE(users.ok()) << users.status();
  JobControllerOptions options{dir_ / "jobs"};
  options.replica_users = &*users;
  executor_ = std::make_unique<executor::FakeExecutor>();
  controller_ = std::make_unique<JobController>(
      &store_, executor_.get(), &images_,
      [](const spec::MachineSpec&) -> std::optional<double> { return std::nullopt; }, options,
      [this] { return clock_.now; });
  ASSERT_TRUE(controller_->Start().ok());
  auto with = [](const std::string& account) {
    return R"({"displayName":"sa","jobSpec":{"serviceAccount":")" + account +
           R"(","workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},
           "replicaCount":"1","containerSpec":{"imageUri":"local","command":["true"]}}]}})";
  };
  ASSERT_TRUE(Create(with("sa@p.iam")).ok());
  ASSERT_TRUE(Create(with("")).ok());
  auto refused = Create(with("other@p.iam"));
  const auto gangs = executor_->submitted();
  ASSERT_EQ(gangs.size(), 2u);
  EXPECT_EQ(gangs[0].run_as->user + " " + gangs[1].run_as->user, "alice nobody");
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("jobSpec.serviceAccount: 'other@p.iam'"),
            std::string::npos)
      << refused.status();
  auto listed = controller_->List(store::ListQuery{kParent});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->jobs.size(), 2u);  // the refused one was not stored
}

// A root server's replicas run as `nobody`: an existing output dir nobody cannot write is refused
// at create, naming it, before anything is stored or queued; one it can write is accepted.
TEST_F(JobControllerTest, AnOutputDirTheReplicaUserCannotWriteIsRefusedAtCreate) {
  ::setenv("TRAINYARD_BUCKET_ROOT", (dir_ / "buckets").c_str(), 1);
  std::filesystem::create_directories(dir_ / "buckets/bkt/out");
  ::chmod((dir_ / "buckets/bkt/out").c_str(), 0755);
  ReplicaUsersOptions o;
  o.server_uid = 0;
  o.server_user = "root";
  o.lookup = [](const std::string& user) -> StatusOr<executor::RunAs> {
    return executor::RunAs{user, 65534, 65534, {}, "/", std::nullopt};
  };
  auto users = ReplicaUsers::Load(o);
  ASSERT_TRUE(users.ok()) << users.status();
  Restart(&*users);
  auto refused = Create(JobWithBase("gs://bkt/out"));
  auto accepted = Create(JobWithBase("gs://bkt/fresh"));
  ::unsetenv("TRAINYARD_BUCKET_ROOT");
  EXPECT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(refused.status().message().starts_with(
      "jobSpec.baseOutputDirectory.outputUriPrefix: user 'nobody' (uid 65534), who runs this "
      "job's replicas, cannot write " +
      (dir_ / "buckets/bkt/out").string() + ": it is owned by "))
      << refused.status();
  EXPECT_EQ(controller_->List({kParent, "", 0, ""})->jobs.size() + executor_->submitted().size(),
            2u);  // only the accepted job: stored and submitted
}

// With the server's bucket check, a baseOutputDirectory in a missing bucket is refused at create,
// naming the field, and nothing is stored or made.
TEST_F(JobControllerTest, ABaseOutputDirectoryInAMissingBucketIsRefusedAtCreate) {
  ::setenv("TRAINYARD_BUCKET_ROOT", (dir_ / "buckets").c_str(), 1);
  std::filesystem::create_directories(dir_ / "buckets/bkt");
  JobControllerOptions options;
  options.check_bucket = [](const std::string& uri) { return CheckBucketExists(uri); };
  Restart(nullptr, options);
  auto refused = Create(JobWithBase("gs://bkt-typo/out"));
  auto accepted = Create(JobWithBase("gs://bkt/out"));
  ::unsetenv("TRAINYARD_BUCKET_ROOT");
  EXPECT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "jobSpec.baseOutputDirectory.outputUriPrefix: bucket 'bkt-typo' of gs://bkt-typo/out "
            "does not exist; create it first (trainyard storage buckets create gs://bkt-typo, or "
            "gcloud storage buckets create gs://bkt-typo) or check the name");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "buckets/bkt-typo"));
  EXPECT_EQ(controller_->List({kParent, "", 0, ""})->jobs.size(), 1u);
}

TEST_F(JobControllerTest, InvalidSpecsAreRejectedWithPathAndNotStored) {
  auto bad = Create(R"({"displayName":"x","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
       "containerSpec":{"imageUri":"local"}}]}})");
  EXPECT_TRUE(bad.status().message().starts_with(
      "jobSpec.workerPoolSpecs[0].containerSpec.command: required when imageUri is \"local\""))
      << bad.status();
  EXPECT_EQ(controller_->List({kParent, "", 0, ""})->jobs.size() + executor_->submitted().size(),
            0u);
}

TEST_F(JobControllerTest, ExecutorValidationErrorsGetTheJobSpecPrefix) {
  executor_->SetValidateError(
      InvalidArgumentError("workerPoolSpecs[1]: NVIDIA_TESLA_T4 x1 requested but this host has "
                           "no GPU"));
  auto bad = Create(R"({"displayName":"x","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
       "containerSpec":{"imageUri":"local","command":["true"]}},
      {"machineSpec":{"machineType":"n1-standard-4","acceleratorType":"NVIDIA_TESLA_T4",
       "acceleratorCount":1},"replicaCount":"1",
       "containerSpec":{"imageUri":"local","command":["true"]}}]}})");
  EXPECT_EQ(bad.status().ToString(),
            "INVALID_ARGUMENT: jobSpec.workerPoolSpecs[1]: NVIDIA_TESLA_T4 x1 requested but this "
            "host has no GPU");
}

// What the machine catalog refuses is refused at create by spec validation, whatever the
// executor, so every executor refuses the same specs.
TEST_F(JobControllerTest, MachineSpecsTheCatalogRefusesAreRefusedAtCreate) {
  auto bad = Create(R"({"displayName":"x","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"a2-highgpu-2g","acceleratorType":"NVIDIA_TESLA_T4",
       "acceleratorCount":1},"replicaCount":"1",
       "containerSpec":{"imageUri":"local","command":["true"]}}]}})");
  EXPECT_EQ(bad.status().ToString(),
            "INVALID_ARGUMENT: jobSpec.workerPoolSpecs[0].machineSpec: a2-highgpu-2g comes with 2 "
            "x NVIDIA_TESLA_A100; set acceleratorType NVIDIA_TESLA_A100 and acceleratorCount 2 (or "
            "leave both unset)");
  EXPECT_TRUE(executor_->submitted().empty());
}

// Issue #45: a job that ended while the server was down ended when its last replica exited —
// the executor's end_time (executor.h GangStatus) — not when the restarted server learnt of it.
TEST_F(JobControllerTest, EndTimeIsWhenTheExecutorSaysTheGangEnded) {
  struct FixedClock : executor::Clock {
    std::chrono::system_clock::time_point t;
    std::chrono::system_clock::time_point Now() const override { return t; }
  };
  static FixedClock executor_clock;  // outlives the executor, which does not own it
  executor_->SetClock(&executor_clock);
  CustomJob job = MustCreate();
  executor_clock.t = clock_.now - std::chrono::hours(2);
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  executor_clock.t = clock_.now - std::chrono::minutes(30);
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kSucceeded).ok());
  auto done = controller_->Get(job.name);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(std::to_string((clock_.now - *done->end_time) / std::chrono::minutes(1)) +
                " min before now; last step " +
                std::to_string((clock_.now - done->trainyard_info->state_history.back().time) /
                               std::chrono::minutes(1)) +
                " min before now",
            "30 min before now; last step 30 min before now");
}

TEST_F(JobControllerTest, ListenerDrivesStateTimesAndCost) {
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kPending).ok());
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  std::string running = State(job);
  ASSERT_TRUE(executor_->SetReplicaResult(job.Id(), 0, 0, 0, 0).ok());
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kSucceeded).ok());
  auto done = controller_->Get(job.name);
  ASSERT_TRUE(done.ok());
  // The fake executor stamps real times; cost = (0.24 + 0.40) + 2 x 0.24 per hour.
  EXPECT_EQ(running + " " + std::string(spec::JobStateName(done->state)) + " " +
                std::to_string(done->trainyard_info->hourly_cost_usd).substr(0, 4) + " " +
                std::to_string(done->start_time.has_value() && done->end_time.has_value()) + " " +
                std::to_string(done->trainyard_info->replicas[0].exit_code.value_or(-1)),
            "JOB_STATE_RUNNING JOB_STATE_SUCCEEDED 1.12 1 0");
}

// The console's timeline: every state entered, with its time, and each replica restart; kept
// in the stored job, so it survives a server restart.
TEST_F(JobControllerTest, StateHistoryRecordsTransitionsAndRestarts) {
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kPending).ok());
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  ASSERT_TRUE(executor_->SetReplicaResult(job.Id(), 1, 0, 3, 0).ok());
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());  // same state: no step
  ASSERT_TRUE(executor_->SetReplicaResult(job.Id(), 1, 0, 0, 1).ok());
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());  // a restart: a step
  ASSERT_TRUE(executor_
                  ->Advance(job.Id(), GangState::kFailed,
                            "workerpool1 replica 0 exited "
                            "with code 2 after 1 restarts")
                  .ok());
  Restart();
  auto got = controller_->Get(job.name);
  ASSERT_TRUE(got.ok()) << got.status();
  std::string steps;
  for (const auto& c : got->trainyard_info->state_history) {
    steps += std::string(spec::JobStateName(c.state)).substr(10) + (c.detail.empty() ? "" : ": ") +
             c.detail + "\n";
  }
  EXPECT_EQ(steps,
            "QUEUED\nPENDING\nRUNNING\n"
            "RUNNING: workerpool1-0 restarted (restart 1, it had exited with code 3)\n"
            "FAILED: workerpool1 replica 0 exited with code 2 after 1 restarts\n");
  json stored = spec::CustomJobToJson(*got)["trainyardInfo"]["stateHistory"];
  EXPECT_EQ(stored.size(), 5u);
  EXPECT_EQ(stored[0].value("state", ""), "JOB_STATE_QUEUED");
  EXPECT_EQ(stored[0].value("time", ""), "2027-01-15T08:00:00.000000Z");
}

TEST_F(JobControllerTest, WhatTheExecutorDoesOtherwiseIsInTheHistory) {
  executor_->SetAdmissionNotes({"workerpool0-0: oversubscribed", "workerpool1-0: oversubscribed",
                                "workerpool1-1: oversubscribed", "workerpool1-2: oversubscribed",
                                "workerpool1-3: oversubscribed"});
  CustomJob job = MustCreate();
  std::string steps;
  for (const auto& c : job.trainyard_info->state_history) {
    steps += std::string(spec::JobStateName(c.state)).substr(10) + (c.detail.empty() ? "" : ": ") +
             c.detail + "\n";
  }
  EXPECT_EQ(steps,
            "QUEUED\nQUEUED: workerpool0-0: oversubscribed\nQUEUED: workerpool1-0: "
            "oversubscribed\nQUEUED: workerpool1-1: oversubscribed\nQUEUED: and 2 more replicas "
            "likewise\n");
}

TEST_F(JobControllerTest, StateHistoryIsBounded) {
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  for (int i = 1; i <= 150; ++i) {
    ASSERT_TRUE(executor_->SetReplicaResult(job.Id(), 0, 0, 1, i).ok());
    ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  }
  auto got = controller_->Get(job.name);
  ASSERT_TRUE(got.ok());
  const auto& history = got->trainyard_info->state_history;
  ASSERT_EQ(history.size(), spec::kMaxStateHistory);
  EXPECT_EQ(history.front().state, JobState::kQueued);
  EXPECT_NE(history.back().detail.find("restart 150,"), std::string::npos) << history.back().detail;
}

TEST_F(JobControllerTest, FailureRecordsTheExecutorReason) {
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  ASSERT_TRUE(executor_
                  ->Advance(job.Id(), GangState::kFailed,
                            "workerpool1 replica 1 exited with code 2 after 3 restarts")
                  .ok());
  auto got = controller_->Get(job.name);
  EXPECT_EQ(std::to_string(got->error->code) + " " + got->error->message,
            "3 workerpool1 replica 1 exited with code 2 after 3 restarts");
}

// on_job_end hears of every job that ends, as stored (the server's metrics count there); a job
// still running is not told of.
TEST_F(JobControllerTest, EveryJobThatEndsIsToldOnceAsStored) {
  std::vector<std::string> ended;
  JobControllerOptions options;
  options.on_job_end = [&](const CustomJob& job) {
    ended.push_back(job.Id() + " " + std::string(spec::JobStateName(job.state)));
  };
  Restart(nullptr, options);
  CustomJob failed = MustCreate();
  ASSERT_TRUE(executor_->Advance(failed.Id(), GangState::kFailed, "replica exited").ok());
  CustomJob cancelled = MustCreate();
  ASSERT_TRUE(controller_->Cancel(cancelled.name).ok());  // the fake executor ends it at once
  CustomJob running = MustCreate();
  ASSERT_TRUE(executor_->Advance(running.Id(), GangState::kRunning).ok());
  EXPECT_EQ(ended, (std::vector<std::string>{failed.Id() + " JOB_STATE_FAILED",
                                             cancelled.Id() + " JOB_STATE_CANCELLED"}));
}

TEST_F(JobControllerTest, AConfigurationErrorIsAFailedPrecondition) {
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  ASSERT_TRUE(executor_
                  ->Advance(job.Id(), GangState::kFailed,
                            "workerpool0 replica 0 exited with code 78 (a configuration error, not "
                            "restarted): cannot write /out",
                            executor::GangFailure::kConfigError)
                  .ok());
  auto got = controller_->Get(job.name);
  EXPECT_EQ(std::to_string(got->error->code) + " " + got->error->message,
            "9 workerpool0 replica 0 exited with code 78 (a configuration error, not restarted): "
            "cannot write /out");
}

TEST_F(JobControllerTest, CancelGoesThroughCancellingAndFinishedJobsCannotBeCancelled) {
  executor_->SetHoldCancel(true);
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  ASSERT_TRUE(controller_->Cancel(job.name).ok());
  std::string mid = State(job);
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kCancelled).ok());
  auto got = controller_->Get(job.name);
  Status again = controller_->Cancel(job.name);
  EXPECT_EQ(
      mid + " " + State(job) + " " + std::to_string(got->error->code) + " " + again.ToString(),
      "JOB_STATE_CANCELLING JOB_STATE_CANCELLED 1 FAILED_PRECONDITION: The CustomJob \"" +
          job.name + "\" is in state JOB_STATE_CANCELLED and cannot be cancelled.");
}

TEST_F(JobControllerTest, StaleRunningUpdateDoesNotUndoCancelling) {
  executor_->SetHoldCancel(true);
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kPending).ok());
  ASSERT_TRUE(controller_->Cancel(job.name).ok());
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kRunning).ok());
  EXPECT_EQ(State(job), "JOB_STATE_CANCELLING");
}

TEST_F(JobControllerTest, DeleteOnlyFinishedJobs) {
  CustomJob job = MustCreate();
  auto early = controller_->Delete(job.name);
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kSucceeded).ok());
  std::filesystem::create_directories(
      executor::JobLogDir(executor::JobDir(dir_ / "jobs", job.Id())));
  std::filesystem::create_directories(
      executor::ReplicaWorkDir(executor::JobDir(dir_ / "jobs", job.Id()), 0, 0));
  ASSERT_TRUE(controller_->Delete(job.name).ok());
  std::set<std::string> left;  // what the job dir keeps: its log, and why
  for (const auto& e :
       std::filesystem::directory_iterator(executor::JobDir(dir_ / "jobs", job.Id()))) {
    left.insert(e.path().filename().string());
  }
  EXPECT_EQ(early.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(left, (std::set<std::string>{"deleted.json", "logs"}));
  EXPECT_EQ(controller_->Get(job.name).status().code(), StatusCode::kNotFound);
}

// As on Google Cloud, a deleted job's log entries stay readable by its project (until log
// retention ends: server/retention.h), and by no other.
TEST_F(JobControllerTest, ADeletedJobsLogStaysReadableByItsProjectOnly) {
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->AppendLog(job.Id(), 0, 0, "epoch 1").ok());
  ASSERT_TRUE(executor_->Advance(job.Id(), GangState::kSucceeded).ok());
  std::filesystem::create_directories(
      executor::JobLogDir(executor::JobDir(dir_ / "jobs", job.Id())));
  ASSERT_TRUE(controller_->Delete(job.name).ok());
  const std::string project = job.name.substr(9, job.name.find('/', 9) - 9);
  auto own = controller_->ReadLogsById(project, job.Id(), -1, 10);
  auto other = controller_->ReadLogsById("other", job.Id(), -1, 10);
  auto reaching = controller_->ReadLogsById(project, job.Id() + "/logs", -1, 10);
  ASSERT_TRUE(own.ok() && other.ok() && reaching.ok());
  EXPECT_EQ(std::to_string(own->size()) + " " + std::to_string(other->size()) + " " +
                std::to_string(reaching->size()),
            "1 0 0");
}

// Draining: jobs are accepted and stored but not started until an admin resumes the server.
TEST_F(JobControllerTest, WhileDrainingJobsAreHeldQueuedWithTheReasonAndStartOnResume) {
  controller_->SetDraining(true);
  CustomJob held = MustCreate();
  CustomJob cancelled = MustCreate();
  ASSERT_TRUE(controller_->Cancel(cancelled.name).ok());
  const auto history = controller_->Get(held.name)->trainyard_info->state_history;
  EXPECT_EQ(State(held) + " " + State(cancelled) + " " +
                std::to_string(executor_->submitted().size()) + " " +
                std::to_string(controller_->held_jobs()) + " " +
                history.back().detail.substr(0, 36),
            "JOB_STATE_QUEUED JOB_STATE_CANCELLED 0 1 held: the server is draining and sta");
  EXPECT_EQ(controller_->SetDraining(false), 1u);
  ASSERT_EQ(executor_->submitted().size(), 1u);
  EXPECT_EQ(executor_->submitted()[0].job_name, held.name);
  EXPECT_EQ(controller_->held_jobs(), 0u);
}

TEST_F(JobControllerTest, AServerStartedDrainedHoldsTheQueuedJobsItFinds) {
  controller_->SetDraining(true);
  CustomJob job = MustCreate();
  Restart(nullptr, JobControllerOptions{}, /*drained=*/true);
  EXPECT_EQ(std::to_string(executor_->submitted().size()) + " " +
                std::to_string(controller_->held_jobs()),
            "0 1");
  controller_->SetDraining(false);
  EXPECT_EQ(executor_->submitted().size(), 1u);
  EXPECT_EQ(State(job), "JOB_STATE_QUEUED");
}

TEST_F(JobControllerTest, SubmitFailureAfterStoringMarksTheJobFailed) {
  executor_->SetSubmitError(UnavailableError("disk full"));
  CustomJob job = MustCreate();
  EXPECT_EQ(std::string(spec::JobStateName(job.state)) + " " + job.error->message,
            "JOB_STATE_FAILED the executor refused the job: disk full");
}

// A cancel arriving between the job being stored and the executor having it must not
// be lost (the executor answers NOT_FOUND then; the gang must still never run).
TEST_F(JobControllerTest, CancelWhileTheJobIsBeingSubmittedCancelsTheGang) {
  std::string cancel_result;
  executor_->SetBeforeSubmitHook([&](const executor::GangSpec& gang) {
    cancel_result = controller_->Cancel(gang.job_name).ToString();
    cancel_result += " " + State(*controller_->Get(gang.job_name));
  });
  CustomJob job = MustCreate();
  executor_->SetBeforeSubmitHook(nullptr);
  auto gang = executor_->Get(job.Id());
  std::string gang_state = !gang.ok()                             ? gang.status().ToString()
                           : gang->state == GangState::kCancelled ? "cancelled"
                                                                  : "NOT cancelled";
  EXPECT_EQ(cancel_result + " -> " + std::string(spec::JobStateName(job.state)) + " " + State(job) +
                " gang " + gang_state,
            "OK JOB_STATE_CANCELLING -> JOB_STATE_CANCELLED JOB_STATE_CANCELLED gang cancelled");
}

TEST_F(JobControllerTest, CancelWhileSubmittingAJobTheExecutorRefusesEndsCancelled) {
  executor_->SetSubmitError(UnavailableError("disk full"));
  executor_->SetBeforeSubmitHook(
      [&](const executor::GangSpec& gang) { (void)controller_->Cancel(gang.job_name); });
  CustomJob job = MustCreate();
  EXPECT_EQ(State(job) + " " + std::to_string(job.error->code), "JOB_STATE_CANCELLED 1");
}

TEST_F(JobControllerTest, RestartReadoptsRunningAndResubmitsQueued) {
  CustomJob running = MustCreate();
  CustomJob lost = MustCreate();
  CustomJob queued = MustCreate();
  ASSERT_TRUE(executor_->Advance(running.Id(), GangState::kRunning).ok());
  ASSERT_TRUE(executor_->Advance(lost.Id(), GangState::kRunning).ok());
  // New process: the fake finds `running`'s processes but not `lost`'s.
  controller_.reset();
  executor_ = std::make_unique<executor::FakeExecutor>();
  auto* fresh = executor_.get();
  fresh->SetAdoptResult(running.Id(), GangState::kRunning);
  controller_ = std::make_unique<JobController>(&store_, fresh, &images_, nullptr,
                                                JobControllerOptions{dir_ / "jobs"},
                                                [this] { return clock_.now; });
  ASSERT_TRUE(controller_->Start().ok());
  std::string ids;
  for (const auto& g : fresh->submitted()) ids += g.job_id + " ";
  auto lost_job = controller_->Get(lost.name);
  EXPECT_EQ(
      State(running) + " " + State(lost) + " " + lost_job->error->message + " " + State(queued),
      "JOB_STATE_RUNNING JOB_STATE_FAILED replicas not found after restart "
      "JOB_STATE_QUEUED");
  EXPECT_EQ(ids, running.Id() + " " + lost.Id() + " " + queued.Id() + " ");
  // The re-adopted job keeps being driven by the new executor.
  ASSERT_TRUE(fresh->Advance(running.Id(), GangState::kSucceeded).ok());
  EXPECT_EQ(State(running), "JOB_STATE_SUCCEEDED");
}

TEST_F(JobControllerTest, LogsComeFromTheExecutorByCursor) {
  CustomJob job = MustCreate();
  ASSERT_TRUE(executor_->AppendLog(job.Id(), 0, 0, "epoch 1").ok());
  ASSERT_TRUE(executor_->AppendLog(job.Id(), 1, 1, "oops", true).ok());
  auto first = controller_->ReadLogs(job.name, -1, 1);
  auto second = controller_->ReadLogs(job.name, first->next_cursor, 10);
  auto none = controller_->ReadLogs(job.name, second->next_cursor, 10);
  EXPECT_EQ(first->lines[0].text + " " + second->lines[0].text + " " +
                std::to_string(none->lines.size()) + " " +
                std::to_string(none->next_cursor == second->next_cursor),
            "epoch 1 oops 0 1");
}

TEST_F(JobControllerTest, IdsAreUniqueAndIncreasing) {
  std::string a = MustCreate().Id(), b = MustCreate().Id();
  EXPECT_TRUE(a.size() == b.size() && a < b) << a << " " << b;
}

}  // namespace
}  // namespace trainyard::controller
