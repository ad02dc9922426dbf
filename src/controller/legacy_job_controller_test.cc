#include "controller/legacy_job_controller.h"

#include <gtest/gtest.h>

#include "controller/replica_users.h"
#include "controller/tuning_job_controller.h"
#include "executor/fake_executor.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using executor::GangState;
using nlohmann::json;

constexpr const char* kLegacyParent = "projects/p";

// The article's container job, on the host ("local" image) so the fake executor takes it.
std::string ContainerJob(const std::string& job_id, const std::string& extra = "") {
  return R"({"jobId":")" + job_id + R"(","labels":{"team":"nlp"},"trainingInput":{
    "region":"us-central1","scaleTier":"CUSTOM","masterType":"n1-standard-4",
    "masterConfig":{"imageUri":"local","containerCommand":["python3","-m","trainer"]},
    "workerType":"n1-standard-4","workerCount":"1","args":["--epochs=1"])" +
         extra + "}}";
}

class LegacyJobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    jobs_ = std::make_unique<JobController>(&store_, &executor_, &images_, nullptr,
                                            JobControllerOptions{dir_ / "jobs"});
    ASSERT_TRUE(jobs_->Start().ok());
    TuningJobControllerOptions o;
    o.poll_interval = std::chrono::milliseconds(0);
    o.seed = 7;
    tuning_ = std::make_unique<TuningJobController>(&store_, jobs_.get(), o);
    ASSERT_TRUE(tuning_->Start().ok());
    legacy_ = std::make_unique<LegacyJobController>(&store_, jobs_.get(), tuning_.get());
    ASSERT_TRUE(legacy_->Start().ok());
  }

  std::string Create(const std::string& body, const std::string& id) {
    auto job = legacy_->Create(kLegacyParent, body, id);
    return job.ok() ? job->dump() : job.status().ToString();
  }
  // "STATE start? end? error" of a job.
  std::string Describe(const std::string& id) {
    auto job = legacy_->Get(std::string(kLegacyParent) + "/jobs/" + id);
    if (!job.ok()) return job.status().ToString();
    return job->value("state", "") + (job->contains("startTime") ? " started" : "") +
           (job->contains("endTime") ? " ended" : "") +
           (job->contains("errorMessage") ? " " + job->value("errorMessage", "") : "");
  }
  std::string BackingId(const std::string& id) {
    auto name = legacy_->BackingName(std::string(kLegacyParent) + "/jobs/" + id);
    return name.ok() ? name->substr(name->rfind('/') + 1) : name.status().ToString();
  }

  std::filesystem::path dir_ = testing::MakeTestDir();
  store::MemoryJobStore store_;
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  executor::FakeExecutor executor_;
  std::unique_ptr<JobController> jobs_;
  std::unique_ptr<TuningJobController> tuning_;
  std::unique_ptr<LegacyJobController> legacy_;
};

TEST_F(LegacyJobControllerTest, AJobIsBackedByACustomJobInItsRegionAndFollowsItsState) {
  const json created = json::parse(Create(ContainerJob("job_1"), "job_1"), nullptr, false);
  ASSERT_TRUE(created.is_object()) << created;
  auto backing = legacy_->BackingName("projects/p/jobs/job_1");
  ASSERT_TRUE(backing.ok()) << backing.status();
  auto custom = jobs_->Get(*backing);
  ASSERT_TRUE(custom.ok()) << custom.status();
  const std::string queued = Describe("job_1");
  ASSERT_TRUE(executor_.Advance(custom->Id(), GangState::kRunning).ok());
  const std::string running = Describe("job_1");
  ASSERT_TRUE(executor_.Advance(custom->Id(), GangState::kSucceeded).ok());
  EXPECT_EQ(created.value("jobId", "") + " " + created.value("state", "") + " " +
                created["labels"].dump() + " " + created["trainingInput"]["masterType"].dump() +
                " | " + backing->substr(0, backing->rfind('/')) + " " + custom->display_name + " " +
                custom->labels.at(kLegacyJobLabel) + " " +
                std::to_string(custom->job_spec.worker_pool_specs.size()) + " " +
                custom->job_spec.tf_config_primary_role + " | " + queued + " | " + running + " | " +
                Describe("job_1"),
            "job_1 QUEUED {\"team\":\"nlp\"} \"n1-standard-4\" | "
            "projects/p/locations/us-central1/customJobs job_1 job_1 2 master | QUEUED | "
            "RUNNING started | SUCCEEDED started ended");
  // The replicas get TF_CONFIG's "master" role, and a job spec without Trainyard's own field.
  const auto& gang = executor_.submitted().at(0);
  EXPECT_EQ(gang.tf_config_primary_role, "master");
  EXPECT_EQ(gang.job_spec_json.find("trainyard"), std::string::npos) << gang.job_spec_json;
}

// scheduling.priority orders the project's queue (spec/job_priority.h): the backing job's label.
TEST_F(LegacyJobControllerTest, SchedulingPriorityReachesTheGangAndOutOfRangeIsRefused) {
  ASSERT_EQ(Create(ContainerJob("prio", R"(,"scheduling":{"priority":700})"), "prio").substr(0, 1),
            "{");
  const std::string refused =
      Create(ContainerJob("too_high", R"(,"scheduling":{"priority":5000})"), "too_high");
  EXPECT_EQ(
      std::to_string(executor_.submitted().at(0).priority) + " " +
          std::to_string(refused.find("trainingInput.scheduling.priority") != std::string::npos),
      "700 1")
      << refused;
}

TEST_F(LegacyJobControllerTest, ADuplicateJobIdIsAlreadyExistsInAiPlatformsWords) {
  ASSERT_EQ(Create(ContainerJob("dup"), "dup").substr(0, 1), "{");
  EXPECT_EQ(Create(ContainerJob("dup"), "dup"),
            "ALREADY_EXISTS: Field: job.job_id Error: A job with this id already exists.");
}

TEST_F(LegacyJobControllerTest, AJobTheEngineRefusesIsA400InTrainingInputTermsAndIsNotStored) {
  const std::string error = Create(
      R"({"trainingInput":{"region":"us-east1","scaleTier":"CUSTOM","masterType":"n1-standard-4",
          "masterConfig":{"imageUri":"local","containerCommand":["true"]},
          "workerType":"n9-huge","workerCount":1}})",
      "refused");
  EXPECT_EQ(error.substr(0, error.find(':', 20)) + " | " + Describe("refused"),
            "INVALID_ARGUMENT: trainingInput.workerType | NOT_FOUND: Job "
            "projects/p/jobs/refused not found");
}

TEST_F(LegacyJobControllerTest, CancelEndsTheJobWithAnEndTimeAndAnEndedJobCannotBeCancelled) {
  ASSERT_EQ(Create(ContainerJob("c1"), "c1").substr(0, 1), "{");
  const Status first = legacy_->Cancel("projects/p/jobs/c1");
  const Status again = legacy_->Cancel("projects/p/jobs/c1");
  EXPECT_EQ(first.ToString() + " | " + Describe("c1") + " | " + again.ToString().substr(0, 19),
            "OK | CANCELLED ended | FAILED_PRECONDITION");
}

TEST_F(LegacyJobControllerTest, AFailedBackingJobGivesFailedWithItsError) {
  ASSERT_EQ(Create(ContainerJob("f1"), "f1").substr(0, 1), "{");
  ASSERT_TRUE(executor_.Advance(BackingId("f1"), GangState::kRunning).ok());
  ASSERT_TRUE(
      executor_
          .Advance(BackingId("f1"), GangState::kFailed, "workerpool0 replica 0 exited with code 3")
          .ok());
  EXPECT_EQ(Describe("f1"), "FAILED started ended workerpool0 replica 0 exited with code 3");
}

TEST_F(LegacyJobControllerTest, HyperparametersRunAStudyWhoseTrialsShowInTrainingOutput) {
  const std::string hp = R"(,"hyperparameters":{"goal":"MAXIMIZE","hyperparameterMetricTag":
      "accuracy","maxTrials":1,"params":[{"parameterName":"lr","type":"DISCRETE",
      "discreteValues":[0.5]}]})";
  ASSERT_EQ(Create(ContainerJob("hp1", hp), "hp1").substr(0, 1), "{");
  tuning_->PollOnce();
  auto streams = legacy_->LogStreams("p", "hp1");
  ASSERT_TRUE(streams.ok() && *streams && (*streams)->size() == 1) << streams.status();
  const std::string trial_job = (**streams)[0].custom_job_id;
  ASSERT_TRUE(executor_.Advance(trial_job, GangState::kRunning).ok());
  ASSERT_TRUE(executor_.AppendLog(trial_job, 0, 0, "accuracy=0.75").ok());
  ASSERT_TRUE(executor_.Advance(trial_job, GangState::kSucceeded).ok());
  tuning_->PollOnce();
  auto job = legacy_->Get("projects/p/jobs/hp1");
  ASSERT_TRUE(job.ok()) << job.status();
  json out = (*job)["trainingOutput"];
  for (auto& t : out["trials"]) t.erase("startTime"), t.erase("endTime");
  EXPECT_EQ(
      (*job)["state"].get<std::string>() + " trial " + (**streams)[0].trial_id + " " + out.dump(),
      "SUCCEEDED trial 1 {\"completedTrialCount\":\"1\",\"consumedMLUnits\":0.0,"
      "\"hyperparameterMetricTag\":\"accuracy\",\"isHyperparameterTuningJob\":true,"
      "\"trials\":[{\"finalMetric\":{\"objectiveValue\":0.75,\"trainingStep\":\"1\"},"
      "\"hyperparameters\":{\"lr\":\"0.5\"},\"state\":\"SUCCEEDED\",\"trialId\":\"1\"}]}");
}

TEST_F(LegacyJobControllerTest, ARestartFailsAJobThatNeverGotItsBackingJob) {
  store::ResourceRecord r;
  r.name = "projects/p/jobs/orphan";
  r.parent = "projects/p";
  r.state = 1;
  r.create_time = std::chrono::system_clock::now();
  r.body = {{"name", r.name}, {"jobId", "orphan"}, {"state", "QUEUED"}};
  ASSERT_TRUE(store_.CreateResource(kLegacyJobsKind, r).ok());
  ASSERT_TRUE(legacy_->Start().ok());
  EXPECT_EQ(Describe("orphan"),
            "FAILED ended The server stopped before the job was started; submit it again (with a "
            "new job id).");
}

// Issue 43 item 3: killed after the backing job was created but before the legacy job recorded
// it, the restarted server said FAILED "submit it again" while the backing job ran (and
// succeeded): a resubmit ran it twice. The name stored before the create finds it again, for a
// custom job and an HP-tuning job, with a case-sensitive id longer than a label value.
TEST_F(LegacyJobControllerTest, ABackingJobCreatedBeforeACrashIsReattachedAfterTheRestart) {
  const std::string hp = R"(,"hyperparameters":{"goal":"MAXIMIZE","maxTrials":1,"params":[
      {"parameterName":"lr","type":"DISCRETE","discreteValues":[0.5]}]})";
  const std::string long_id = "Job_" + std::string(100, 'X');
  std::string got;
  for (const auto& [id, extra] :
       {std::pair{long_id, std::string()}, std::pair{std::string("Hp_1"), hp}}) {
    ASSERT_EQ(Create(ContainerJob(id, extra), id).substr(0, 1), "{");
    const std::string backing = BackingId(id);
    // The crash: the runtime state as it was stored just before the backing job was created.
    ASSERT_TRUE(store_
                    .MutateResource(kLegacyJobsKind, "projects/p/jobs/" + id,
                                    [](store::ResourceRecord& r) {
                                      r.runtime.erase("backing");
                                      return Status::Ok();
                                    })
                    .ok());
    legacy_ = std::make_unique<LegacyJobController>(&store_, jobs_.get(), tuning_.get());
    ASSERT_TRUE(legacy_->Start().ok());
    got += Describe(id) + (BackingId(id) == backing ? " same backing job" : " lost its job") + "\n";
  }
  EXPECT_EQ(got, "QUEUED same backing job\nRUNNING started same backing job\n");
}

TEST_F(LegacyJobControllerTest, LabelsArePatchableAndTheEtagChangesWithThem) {
  ASSERT_EQ(Create(ContainerJob("l1"), "l1").substr(0, 1), "{");
  auto before = legacy_->Get("projects/p/jobs/l1");
  auto patched =
      legacy_->Patch("projects/p/jobs/l1", json::parse(R"({"labels":{"a":"b"}})"), {"labels"});
  auto refused = legacy_->Patch("projects/p/jobs/l1", {{"jobId", "x"}}, {"jobId"});
  ASSERT_TRUE(before.ok() && patched.ok()) << before.status() << patched.status();
  EXPECT_EQ((*patched)["labels"].dump() + " " +
                std::to_string((*before)["etag"] != (*patched)["etag"]) + " " +
                std::to_string((*patched)["etag"].get<std::string>().size()) + " " +
                refused.status().ToString().substr(0, 28),
            "{\"a\":\"b\"} 1 16 INVALID_ARGUMENT: updateMask");
}

// trainingInput.serviceAccount chooses the replicas' Unix user through the replica-user table,
// as a custom job's does; an unmapped one is a 400 in trainingInput's terms, nothing stored.
TEST(LegacyJobServiceAccountTest, TheServiceAccountChoosesTheReplicasUserOrIsRefused) {
  const std::filesystem::path dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "accounts.json",
                          R"({"projects":{"p":{"serviceAccounts":{"sa@p.iam":"alice"}}}})");
  ReplicaUsersOptions o;
  o.table_file = dir / "accounts.json";
  o.server_uid = 0;
  o.server_user = "root";
  o.lookup = [](const std::string& user) -> StatusOr<executor::RunAs> {
    if (user == "alice") return executor::RunAs{"alice", 1000, 1000, {}, "/home/alice"};
    if (user == "nobody") return executor::RunAs{"nobody", 65534, 65534, {}, "/"};
    return NotFoundError("no user " + user);
  };
  auto users = ReplicaUsers::Load(o);
  ASSERT_TRUE(users.ok()) << users.status();
  store::MemoryJobStore store;
  executor::FakeExecutor executor;
  spec::ImageCatalog images = spec::ImageCatalog::BuiltIn();
  JobControllerOptions options{dir / "jobs"};
  options.replica_users = &*users;
  JobController jobs(&store, &executor, &images, nullptr, options);
  ASSERT_TRUE(jobs.Start().ok());
  LegacyJobController legacy(&store, &jobs, nullptr);
  auto with = [](const std::string& account) {
    return R"({"trainingInput":{"region":"us-east1","serviceAccount":")" + account +
           R"(","masterConfig":{"imageUri":"local","containerCommand":["true"]}}})";
  };
  auto mapped = legacy.Create("projects/p", with("sa@p.iam"), "sa_job");
  auto refused = legacy.Create("projects/p", with("other@p.iam"), "refused");
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_EQ(executor.submitted().at(0).run_as->user + " | " +
                refused.status().ToString().substr(0, 61) + " | " +
                legacy.Get("projects/p/jobs/refused").status().ToString(),
            "alice | INVALID_ARGUMENT: trainingInput.serviceAccount: 'other@p.iam' | "
            "NOT_FOUND: Job projects/p/jobs/refused not found");
}

}  // namespace
}  // namespace trainyard::controller
