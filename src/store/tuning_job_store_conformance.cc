#include "store/tuning_job_store_conformance.h"

#include "common/time.h"
#include "spec/hyperparameter_tuning_job_json.h"
#include "store/list_conformance.h"
#include "testing/test_util.h"

namespace trainyard::store {

using spec::JobState;

namespace {
constexpr const char* kPrefix = "projects/p/locations/l/hyperparameterTuningJobs/";
}  // namespace

void TuningJobStoreConformanceTest::SetUp() {
  dir_ = testing::MakeTestDir();
  store_ = GetParam()(dir_);
  ASSERT_NE(store_, nullptr);
}

TuningJobRecord TuningJobStoreConformanceTest::MakeRecord(
    const std::string& id, int64_t created_s, JobState state, const std::string& display_name,
    std::map<std::string, std::string> labels) {
  TuningJobRecord r;
  spec::HyperparameterTuningJob& job = r.job;
  job.name = kPrefix + id;
  job.display_name = display_name;
  job.state = state;
  job.create_time = FromUnixMicros(created_s * 1000000);
  job.update_time = job.create_time;
  job.labels = std::move(labels);
  job.study_spec.metrics.push_back({"accuracy", tuning::Goal::kMaximize});
  tuning::ParameterSpec lr;
  lr.parameter_id = "lr";
  lr.min_value = 0.001;
  lr.max_value = 0.1;
  job.study_spec.parameters.push_back(lr);
  job.max_trial_count = 2;
  job.parallel_trial_count = 1;
  job.trial_job_spec.worker_pool_specs.push_back(conformance::TrueWorkerPool());
  r.runtime = {{"v", id}};
  return r;
}

std::string TuningJobStoreConformanceTest::Ids(
    const std::vector<spec::HyperparameterTuningJob>& jobs) {
  return conformance::JoinIds(jobs);
}

std::string TuningJobStoreConformanceTest::ListAll(const std::string& filter, int page_size) {
  return conformance::ListAllIds(filter, page_size,
                                 [this](const ListQuery& q) { return store_->ListTuningJobs(q); });
}

TEST_P(TuningJobStoreConformanceTest, CreateThenGetReturnsTheSameJobAndRuntime) {
  TuningJobRecord r = MakeRecord("1", 100, JobState::kRunning, "sweep", {{"team", "nlp"}});
  r.job.trials.push_back({.id = "1", .state = tuning::TrialState::kActive});
  ASSERT_TRUE(store_->CreateTuningJob(r).ok());
  auto got = store_->GetTuningJob(r.job.name);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(spec::HyperparameterTuningJobToJson(got->job).dump() + got->runtime.dump(),
            spec::HyperparameterTuningJobToJson(r.job).dump() + r.runtime.dump());
}

TEST_P(TuningJobStoreConformanceTest, CreateTwiceIsAlreadyExistsAndBadNamesAreRefused) {
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("1", 100)).ok());
  TuningJobRecord custom_name = MakeRecord("2", 100);
  custom_name.job.name = "projects/p/locations/l/customJobs/2";
  TuningJobRecord no_time = MakeRecord("3", 100);
  no_time.job.create_time.reset();
  EXPECT_EQ(std::string(StatusCodeName(store_->CreateTuningJob(MakeRecord("1", 100)).code())) +
                " " + std::string(StatusCodeName(store_->CreateTuningJob(custom_name).code())) +
                " " + std::string(StatusCodeName(store_->CreateTuningJob(no_time).code())),
            "ALREADY_EXISTS INVALID_ARGUMENT INVALID_ARGUMENT");
}

TEST_P(TuningJobStoreConformanceTest, MissingJobsAreNotFound) {
  const std::string name = std::string(kPrefix) + "404";
  TuningJobRecord r = MakeRecord("404", 1);
  EXPECT_EQ(std::string(StatusCodeName(store_->GetTuningJob(name).status().code())) + " " +
                std::string(StatusCodeName(store_->UpdateTuningJob(r).code())) + " " +
                std::string(StatusCodeName(store_->DeleteTuningJob(name).code())),
            "NOT_FOUND NOT_FOUND NOT_FOUND");
}

TEST_P(TuningJobStoreConformanceTest, UpdateReplacesJobRuntimeAndLabels) {
  ASSERT_TRUE(
      store_->CreateTuningJob(MakeRecord("1", 100, JobState::kPending, "a", {{"k", "v"}})).ok());
  TuningJobRecord r = MakeRecord("1", 100, JobState::kSucceeded, "a", {{"phase", "done"}});
  r.runtime = {{"v", "updated"}};
  ASSERT_TRUE(store_->UpdateTuningJob(r).ok());
  auto got = store_->GetTuningJob(r.job.name);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(std::string(spec::JobStateName(got->job.state)) + " " + got->runtime.dump() + " [" +
                ListAll("labels.k:*") + "] [" + ListAll("labels.phase=done") + "] [" +
                ListAll("state=JOB_STATE_SUCCEEDED") + "]",
            R"(JOB_STATE_SUCCEEDED {"v":"updated"} [] [1] [1])");
}

TEST_P(TuningJobStoreConformanceTest, DeleteRemovesJobAndItsLabels) {
  ASSERT_TRUE(
      store_->CreateTuningJob(MakeRecord("1", 100, JobState::kFailed, "a", {{"k", "v"}})).ok());
  ASSERT_TRUE(store_->DeleteTuningJob(std::string(kPrefix) + "1").ok());
  EXPECT_EQ(ListAll("") + "|" + ListAll("labels.k:*"), "|");
}

TEST_P(TuningJobStoreConformanceTest, ListsNewestFirstAcrossPagesScopedToParent) {
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(store_->CreateTuningJob(MakeRecord(std::to_string(i), i)).ok());
  }
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("6", 5)).ok());  // same time as 5: name decides
  TuningJobRecord other = MakeRecord("9", 9);
  other.job.name = "projects/q/locations/l/hyperparameterTuningJobs/9";
  ASSERT_TRUE(store_->CreateTuningJob(other).ok());
  auto first = store_->ListTuningJobs({"projects/p/locations/l", "", 2, ""});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("7", 7)).ok());  // added while paging
  auto second = store_->ListTuningJobs({"projects/p/locations/l", "", 2, first->next_page_token});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(ListAll("", 4) + " | " + Ids(first->jobs) + " | " + Ids(second->jobs),
            "7 6 5 4 3 2 1 | 6 5 | 4 3");
}

TEST_P(TuningJobStoreConformanceTest, FiltersFollowTheCustomJobSyntax) {
  auto create = [&](const std::string& id, int64_t t, JobState s, const std::string& display,
                    std::map<std::string, std::string> labels) {
    ASSERT_TRUE(store_->CreateTuningJob(MakeRecord(id, t, s, display, std::move(labels))).ok());
  };
  create("1", 1000, JobState::kSucceeded, "bert-lr", {{"team", "nlp"}});
  create("2", 2000, JobState::kCancelled, "resnet", {{"team", "cv"}});
  create("3", 3000, JobState::kRunning, "bert-wd", {});
  std::vector<std::pair<std::string, std::string>> cases = {
      {R"(state="JOB_STATE_SUCCEEDED")", "1"},
      {R"(state!=JOB_STATE_SUCCEEDED)", "3 2"},
      {R"(display_name:"bert*" AND labels.team=nlp)", "1"},
      {R"(NOT labels.team:*)", "3"},
      {R"(create_time>"1970-01-01T00:33:20Z")", "3"},
      {R"(state=JOB_STATE_RUNNING OR labels.team=cv)", "3 2"},
  };
  std::string report;
  for (const auto& [filter, want] : cases) {
    std::string got = ListAll(filter, 1);
    if (got != want) report += filter + " -> '" + got + "', want '" + want + "'\n";
  }
  EXPECT_EQ(report, "");
}

TEST_P(TuningJobStoreConformanceTest, BadFiltersAndTokensAreInvalidArgument) {
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(store_->CreateTuningJob(MakeRecord(std::to_string(i), i)).ok());
  }
  auto page = store_->ListTuningJobs({"projects/p/locations/l", "", 1, ""});
  ASSERT_TRUE(page.ok());
  auto replay = store_->ListTuningJobs(
      {"projects/p/locations/l", "state=JOB_STATE_RUNNING", 1, page->next_page_token});
  auto garbage = store_->ListTuningJobs({"projects/p/locations/l", "", 0, "12"});
  auto filter = store_->ListTuningJobs({"projects/p/locations/l", "statee=1", 0, ""});
  EXPECT_EQ(replay.status().ToString().substr(0, 27) + " | " +
                garbage.status().ToString().substr(0, 27) + " | " +
                filter.status().ToString().substr(0, 48),
            "INVALID_ARGUMENT: pageToken | INVALID_ARGUMENT: pageToken | "
            "INVALID_ARGUMENT: filter: unknown field 'statee'");
}

TEST_P(TuningJobStoreConformanceTest, ListAllReturnsEveryParentOldestFirst) {
  TuningJobRecord other = MakeRecord("2", 2);
  other.job.name = "projects/q/locations/l/hyperparameterTuningJobs/2";
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("3", 3, JobState::kSucceeded)).ok());
  ASSERT_TRUE(store_->CreateTuningJob(other).ok());
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("1", 1)).ok());
  auto all = store_->ListAllTuningJobs();
  ASSERT_TRUE(all.ok());
  std::string got;
  for (const auto& r : *all) got += r.job.name.substr(9, 1) + r.job.Id() + " ";
  EXPECT_EQ(got, "p1 q2 p3 ");
}

TEST_P(TuningJobStoreConformanceTest, CountTuningJobsByParentNamesEveryParent) {
  TuningJobRecord other = MakeRecord("2", 2);
  other.job.name = "projects/q/locations/asia-east1/hyperparameterTuningJobs/2";
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("1", 1)).ok());
  ASSERT_TRUE(store_->CreateTuningJob(other).ok());
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("3", 3)).ok());
  auto counts = store_->CountTuningJobsByParent();
  ASSERT_TRUE(counts.ok()) << counts.status();
  std::string got;
  for (const ParentCount& c : *counts) got += c.parent + "=" + std::to_string(c.count) + " ";
  EXPECT_EQ(got, "projects/p/locations/l=2 projects/q/locations/asia-east1=1 ");
}

TEST_P(TuningJobStoreConformanceTest, CountTuningJobsByStateCountsEveryParent) {
  TuningJobRecord other = MakeRecord("2", 2, JobState::kFailed);
  other.job.name = "projects/q/locations/asia-east1/hyperparameterTuningJobs/2";
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("1", 1, JobState::kRunning)).ok());
  ASSERT_TRUE(store_->CreateTuningJob(other).ok());
  ASSERT_TRUE(store_->CreateTuningJob(MakeRecord("3", 3, JobState::kRunning)).ok());
  auto counts = store_->CountTuningJobsByState();
  ASSERT_TRUE(counts.ok()) << counts.status();
  std::string got;
  for (const StateCount& c : *counts) {
    got += std::to_string(c.state) + "=" + std::to_string(c.count) + " ";
  }
  EXPECT_EQ(got, "3=2 5=1 ");  // RUNNING, FAILED
}

}  // namespace trainyard::store
