// JobController's admission by project quota and priority (job_controller.h "Admission",
// project_quota.h); issue #46.
#include <gtest/gtest.h>

#include "controller/job_controller.h"
#include "executor/fake_executor.h"
#include "spec/custom_job_json.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using executor::GangState;
using spec::CustomJob;

// One replica of n1-standard-4: 4 vCPUs, 15 GiB; `extra` goes into the job (labels, ...).
std::string Job(const std::string& extra = "", const std::string& scheduling = "") {
  return R"({"displayName":"q",)" + extra +
         R"("jobSpec":{"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},
         "replicaCount":"1","containerSpec":{"imageUri":"local","command":["true"]}}])" +
         scheduling + "}}";
}

class JobControllerQuotaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    JobControllerOptions options;
    options.jobs_dir = dir_ / "jobs";
    options.quotas = &quotas_;
    controller_ = std::make_unique<JobController>(&store_, &executor_, &images_, nullptr, options,
                                                  [this] { return now_; });
    ASSERT_TRUE(controller_->Start().ok());
  }

  void SetQuota(const std::string& project, const std::string& json) {
    auto q = ProjectQuotaFromJson(nlohmann::json::parse(json));
    ASSERT_TRUE(q.ok()) << q.status();
    ASSERT_TRUE(quotas_.Set(project, *q).ok());
    controller_->QuotasChanged();
  }

  StatusOr<CustomJob> Create(const std::string& project, const std::string& json = Job()) {
    auto req = spec::ParseCustomJob(json, spec::DecodeMode::kRequest);
    if (!req.ok()) return req.status();
    return controller_->Create("projects/" + project + "/locations/l", *req);
  }
  CustomJob MustCreate(const std::string& project, const std::string& json = Job()) {
    auto job = Create(project, json);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : CustomJob{};
  }

  // The ids of the gangs the executor got, in order: "17 18".
  std::string Submitted() {
    std::string out;
    for (const auto& g : executor_.submitted()) out += (out.empty() ? "" : " ") + g.job_id;
    return out;
  }
  std::string LastStep(const CustomJob& job) {
    auto got = controller_->Get(job.name);
    return got.ok() ? got->trainyard_info->state_history.back().detail : got.status().ToString();
  }
  void Finish(const CustomJob& job) {
    ASSERT_TRUE(executor_.Advance(job.Id(), GangState::kRunning).ok());
    ASSERT_TRUE(executor_.Advance(job.Id(), GangState::kSucceeded).ok());
  }

  std::filesystem::path dir_ = testing::MakeTestDir();
  spec::Timestamp now_ = spec::Timestamp(std::chrono::seconds(1'800'000'000));
  QuotaBook quotas_{dir_ / "quotas.json"};
  store::MemoryJobStore store_;
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  executor::FakeExecutor executor_;
  std::unique_ptr<JobController> controller_;
};

TEST_F(JobControllerQuotaTest, AJobOverQuotaWaitsQueuedWithItsReasonAndRunsOnceQuotaFrees) {
  SetQuota("teama", R"({"vcpus": 8})");
  CustomJob a = MustCreate("teama"), b = MustCreate("teama"), c = MustCreate("teama");
  EXPECT_EQ(Submitted(), a.Id() + " " + b.Id());
  EXPECT_EQ(LastStep(c),
            "held: project teama is using 8 of its 8 vCPUs quota and the job asks for 4; it "
            "starts when the project's jobs free enough or an admin raises the quota");
  EXPECT_EQ(controller_->ProjectUses()["teama"].held_jobs, 1);
  Finish(a);
  EXPECT_EQ(Submitted(), a.Id() + " " + b.Id() + " " + c.Id());
}

TEST_F(JobControllerQuotaTest, AJobLargerThanTheWholeQuotaIsRefusedAtCreate) {
  SetQuota("teama", R"({"vcpus": 2})");
  auto job = Create("teama");
  EXPECT_EQ(job.status().ToString(),
            "RESOURCE_EXHAUSTED: the job asks for 4 vCPUs but project teama's whole quota is 2 "
            "vCPUs; ask an admin to raise it (trainyard admin quota set teama) or request fewer");
}

TEST_F(JobControllerQuotaTest, ABurstOfOneProjectDoesNotHoldAnothersJob) {
  SetQuota("teama", R"({"concurrentJobs": 2})");
  SetQuota("teamb", R"({"concurrentJobs": 2})");
  for (int i = 0; i < 200; ++i) MustCreate("teama");
  CustomJob b = MustCreate("teamb");
  EXPECT_EQ(executor_.submitted().size(), 3u);
  EXPECT_EQ(executor_.submitted().back().job_id, b.Id());
}

TEST_F(JobControllerQuotaTest, PriorityOrdersAProjectsHeldJobs) {
  SetQuota("p", R"({"concurrentJobs": 1})");
  CustomJob run = MustCreate("p");
  CustomJob low = MustCreate("p");
  CustomJob high = MustCreate("p", Job(R"("labels":{"trainyard-priority":"500"},)"));
  Finish(run);
  EXPECT_EQ(Submitted(), run.Id() + " " + high.Id());
  Finish(high);
  EXPECT_EQ(Submitted(), run.Id() + " " + high.Id() + " " + low.Id());
}

TEST_F(JobControllerQuotaTest, RaisingTheQuotaStartsHeldJobs) {
  SetQuota("p", R"({"concurrentJobs": 1})");
  MustCreate("p");
  MustCreate("p");
  SetQuota("p", R"({"concurrentJobs": 2})");
  EXPECT_EQ(executor_.submitted().size(), 2u);
}

TEST_F(JobControllerQuotaTest, AHeldJobFailsOnceItsMaxWaitDurationPassed) {
  SetQuota("p", R"({"concurrentJobs": 1})");
  MustCreate("p");
  CustomJob waits = MustCreate("p", Job("", R"(,"scheduling":{"maxWaitDuration":"60s"})"));
  now_ += std::chrono::seconds(61);
  controller_->Tick();
  auto got = controller_->Get(waits.name);
  ASSERT_TRUE(got.ok());
  const std::string message = got->error->message;
  EXPECT_EQ(std::string(spec::JobStateName(got->state)) + " " + std::to_string(got->error->code) +
                " " + message.substr(0, message.find(';')),
            "JOB_STATE_FAILED 8 the job waited longer than its scheduling.maxWaitDuration without "
            "starting");
}

// The wait in the executor's own queue (the host full) is bounded too: the job fails, its gang is
// cancelled; a job the executor started in time runs on.
TEST_F(JobControllerQuotaTest, AJobQueuedInTheExecutorFailsOnceItsMaxWaitDurationPassed) {
  const std::string wait = R"(,"scheduling":{"maxWaitDuration":"60s"})";
  CustomJob queued = MustCreate("p", Job("", wait)), started = MustCreate("p", Job("", wait));
  ASSERT_TRUE(executor_.Advance(started.Id(), GangState::kRunning).ok());
  auto describe = [&](const CustomJob& job) {
    auto got = controller_->Get(job.name);
    if (!got.ok()) return got.status().ToString();
    std::string out(spec::JobStateName(got->state));
    if (got->error) out += " " + std::to_string(got->error->code) + " " + got->error->message;
    auto gang = executor_.Get(job.Id());
    return out + " (" + (gang.ok() ? executor::GangStateName(gang->state) : "?") + ")";
  };
  now_ += std::chrono::seconds(59);
  controller_->Tick();
  const std::string before = describe(queued);
  now_ += std::chrono::seconds(2);
  controller_->Tick();
  EXPECT_EQ(before + " | " + describe(queued) + " | " + describe(started),
            "JOB_STATE_QUEUED (QUEUED) | JOB_STATE_FAILED 8 the job waited longer than its "
            "scheduling.maxWaitDuration without starting; queued in the executor: what its "
            "replicas ask for was never free at once (CANCELLED) | JOB_STATE_RUNNING (RUNNING)");
}

TEST_F(JobControllerQuotaTest, CancellingAHeldJobEndsItAndFreesItsPlace) {
  SetQuota("p", R"({"concurrentJobs": 1})");
  CustomJob run = MustCreate("p");
  CustomJob held = MustCreate("p");
  ASSERT_TRUE(controller_->Cancel(held.name).ok());
  Finish(run);
  EXPECT_EQ(Submitted() + " " + std::to_string(controller_->held_jobs()), run.Id() + " 0");
}

TEST_F(JobControllerQuotaTest, ANonIntegerPriorityLabelIsRefusedNamingIt) {
  auto job = Create("p", Job(R"("labels":{"trainyard-priority":"high"},)"));
  EXPECT_EQ(job.status().ToString(),
            "INVALID_ARGUMENT: labels.trainyard-priority: must be an integer from 0 to 1000 "
            "(higher runs first within the project), got 'high'");
}

constexpr char kTeamaPaused[] =
    "held: project teama is paused by an admin since 2027-01-15T08:00:00.000000Z; it starts once "
    "an admin resumes it (trainyard admin resume --project teama)";

TEST_F(JobControllerQuotaTest, APausedProjectsJobsWaitWithTheReasonOthersStartResumeStartsThem) {
  controller_->SetPaused("teama", now_);
  CustomJob a = MustCreate("teama"), b = MustCreate("teamb");
  EXPECT_EQ(Submitted() + " | " + LastStep(a), b.Id() + " | " + kTeamaPaused);
  EXPECT_EQ(controller_->SetPaused("teama", std::nullopt), 1u);
  EXPECT_EQ(Submitted(), b.Id() + " " + a.Id());
}

TEST_F(JobControllerQuotaTest, APauseCoversJobsHeldByTheQuotaAndOutlastsTheirRelease) {
  SetQuota("teama", R"({"concurrentJobs": 1})");
  CustomJob run = MustCreate("teama"), held = MustCreate("teama");
  controller_->SetPaused("teama", now_);
  Finish(run);  // frees the quota: still paused
  EXPECT_EQ(Submitted() + " | " + LastStep(held), run.Id() + " | " + kTeamaPaused);
  controller_->SetPaused("teama", std::nullopt);
  EXPECT_EQ(Submitted(), run.Id() + " " + held.Id());
}

// A job already in the executor's queue when its project is paused: the executor is told (the
// local one holds it there) and the job's history says why it waits.
TEST_F(JobControllerQuotaTest, APauseIsNotedOnTheProjectsJobsTheExecutorHasQueued) {
  CustomJob queued = MustCreate("teama"), running = MustCreate("teama");
  ASSERT_TRUE(executor_.Advance(running.Id(), GangState::kRunning).ok());
  controller_->SetPaused("teama", now_);
  EXPECT_EQ(LastStep(queued) + " | " + LastStep(running), std::string(kTeamaPaused) + " | ");
}

TEST_F(JobControllerQuotaTest, ResumingTheServerLeavesAPausedProjectPaused) {
  controller_->SetDraining(true);
  controller_->SetPaused("teama", now_);
  CustomJob a = MustCreate("teama"), b = MustCreate("teamb");
  EXPECT_EQ(controller_->SetDraining(false), 1u);
  EXPECT_EQ(Submitted() + " " + std::to_string(controller_->ProjectUses()["teama"].held_jobs),
            b.Id() + " 1");
}

TEST(PauseBookTest, PausesSurviveInTheirFileKeepingTheirFirstTime) {
  const auto file = testing::MakeTestDir() / "paused_projects.json";
  const TimePoint t0 = FromUnixMicros(1'800'000'000'000'000), t1 = t0 + std::chrono::hours(1);
  {
    PauseBook book(file);
    ASSERT_TRUE(book.Set("teama", t0).ok());
    ASSERT_TRUE(book.Set("teama", t1).ok());  // already paused: keeps t0
    ASSERT_TRUE(book.Set("teamb", t1).ok());
    ASSERT_TRUE(book.Set("teamb", std::nullopt).ok());
  }
  PauseBook again(file);
  ASSERT_TRUE(again.Load().ok());
  std::string got;
  for (const auto& [project, since] : again.All()) got += project + "@" + FormatTimestamp(since);
  EXPECT_EQ(got, "teama@2027-01-15T08:00:00.000000Z");
}

TEST(PauseBookTest, AMalformedFileIsRefusedNamingIt) {
  const auto file = testing::MakeTestDir() / "paused_projects.json";
  testing::WriteFileOrDie(file, R"({"projects": {"teama": 7}})");
  PauseBook book(file);
  EXPECT_EQ(book.Load().ToString(),
            "INVALID_ARGUMENT: " + file.string() + ": project teama: not a string");
}

TEST(QuotaBookTest, QuotasSurviveInTheirFileAndBadOnesNameTheField) {
  const auto file = testing::MakeTestDir() / "quotas.json";
  {
    QuotaBook book(file);
    auto q = ProjectQuotaFromJson(nlohmann::json::parse(
        R"({"vcpus": 8, "memoryGib": 32, "gpus": {"NVIDIA_TESLA_T4": 2}, "concurrentJobs": 4,
            "weight": 2})"));
    ASSERT_TRUE(q.ok()) << q.status();
    ASSERT_TRUE(book.Set("teama", *q).ok());
  }
  QuotaBook again(file);
  ASSERT_TRUE(again.Load().ok());
  EXPECT_EQ(ProjectQuotaToJson(*again.Get("teama")).dump(),
            R"({"concurrentJobs":4,"gpus":{"NVIDIA_TESLA_T4":2},"memoryGib":32.0,"vcpus":8.0,)"
            R"("weight":2.0})");
  EXPECT_EQ(ProjectQuotaFromJson(nlohmann::json::parse(R"({"vcpus": -1})")).status().ToString(),
            "INVALID_ARGUMENT: vcpus: must be a number >= 0");
}

}  // namespace
}  // namespace trainyard::controller
