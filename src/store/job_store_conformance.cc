#include "store/job_store_conformance.h"

#include "common/time.h"
#include "spec/custom_job_json.h"
#include "store/list_conformance.h"
#include "testing/test_util.h"

namespace trainyard::store {

using spec::CustomJob;
using spec::JobState;

void JobStoreConformanceTest::SetUp() {
  dir_ = testing::MakeTestDir();
  store_ = GetParam()(dir_);
  ASSERT_NE(store_, nullptr);
}

CustomJob JobStoreConformanceTest::MakeJob(const std::string& id, int64_t created_s, JobState state,
                                           const std::string& display_name,
                                           std::map<std::string, std::string> labels) {
  CustomJob job;
  job.name = "projects/p/locations/l/customJobs/" + id;
  job.display_name = display_name;
  job.state = state;
  job.create_time = FromUnixMicros(created_s * 1000000);
  job.update_time = job.create_time;
  job.labels = std::move(labels);
  job.job_spec.worker_pool_specs.push_back(conformance::TrueWorkerPool());
  return job;
}

std::string JobStoreConformanceTest::Ids(const std::vector<CustomJob>& jobs) {
  return conformance::JoinIds(jobs);
}

std::string JobStoreConformanceTest::ListAll(const std::string& filter, int page_size) {
  return conformance::ListAllIds(filter, page_size,
                                 [this](const ListQuery& q) { return store_->List(q); });
}

TEST_P(JobStoreConformanceTest, CreateThenGetReturnsTheSameJob) {
  CustomJob job = MakeJob("1", 100, JobState::kQueued, "bert", {{"team", "nlp"}});
  ASSERT_TRUE(store_->Create(job).ok());
  auto got = store_->Get(job.name);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(spec::CustomJobToJson(*got).dump(), spec::CustomJobToJson(job).dump());
}

TEST_P(JobStoreConformanceTest, CreateTwiceIsAlreadyExists) {
  ASSERT_TRUE(store_->Create(MakeJob("1", 100)).ok());
  EXPECT_EQ(store_->Create(MakeJob("1", 100)).code(), StatusCode::kAlreadyExists);
}

TEST_P(JobStoreConformanceTest, RejectsMalformedNames) {
  CustomJob job = MakeJob("1", 100);
  job.name = "customJobs/1";
  EXPECT_EQ(store_->Create(job).code(), StatusCode::kInvalidArgument);
}

TEST_P(JobStoreConformanceTest, MissingJobsAreNotFound) {
  const std::string name = "projects/p/locations/l/customJobs/404";
  EXPECT_EQ(store_->Get(name).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Delete(name).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Mutate(name, [](CustomJob&) { return Status::Ok(); }).status().code(),
            StatusCode::kNotFound);
}

TEST_P(JobStoreConformanceTest, MutateWritesAndAFailedMutateWritesNothing) {
  CustomJob job = MakeJob("1", 100);
  ASSERT_TRUE(store_->Create(job).ok());
  ASSERT_TRUE(store_
                  ->Mutate(job.name,
                           [](CustomJob& j) {
                             j.state = JobState::kRunning;
                             j.labels["phase"] = "train";
                             return Status::Ok();
                           })
                  .ok());
  auto failed = store_->Mutate(job.name, [](CustomJob& j) {
    j.state = JobState::kFailed;
    return FailedPreconditionError("no");
  });
  EXPECT_EQ(failed.status().code(), StatusCode::kFailedPrecondition);
  auto got = store_->Get(job.name);
  EXPECT_EQ(std::string(spec::JobStateName(got->state)) + " " + got->labels["phase"] + " " +
                ListAll("labels.phase=train"),
            "JOB_STATE_RUNNING train 1");
}

TEST_P(JobStoreConformanceTest, DeleteRemovesJobAndItsLabels) {
  ASSERT_TRUE(store_->Create(MakeJob("1", 100, JobState::kSucceeded, "a", {{"k", "v"}})).ok());
  ASSERT_TRUE(store_->Delete("projects/p/locations/l/customJobs/1").ok());
  EXPECT_EQ(ListAll("") + "|" + ListAll("labels.k:*"), "|");
}

TEST_P(JobStoreConformanceTest, ListsNewestFirstAcrossPagesWithoutGapsOrDuplicates) {
  for (int i = 1; i <= 7; ++i) ASSERT_TRUE(store_->Create(MakeJob(std::to_string(i), i)).ok());
  ASSERT_TRUE(store_->Create(MakeJob("8", 7)).ok());  // same create time as 7: name breaks ties
  EXPECT_EQ(ListAll("", 3), "8 7 6 5 4 3 2 1");
}

TEST_P(JobStoreConformanceTest, PagingIsStableWhileJobsAreAdded) {
  for (int i = 1; i <= 4; ++i) ASSERT_TRUE(store_->Create(MakeJob(std::to_string(i), i)).ok());
  auto first = store_->List({"projects/p/locations/l", "", 2, ""});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(store_->Create(MakeJob("9", 9)).ok());
  auto second = store_->List({"projects/p/locations/l", "", 2, first->next_page_token});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(Ids(first->jobs) + " | " + Ids(second->jobs), "4 3 | 2 1");
}

TEST_P(JobStoreConformanceTest, ListIsScopedToParent) {
  CustomJob other = MakeJob("1", 1);
  other.name = "projects/q/locations/l/customJobs/1";
  ASSERT_TRUE(store_->Create(other).ok());
  ASSERT_TRUE(store_->Create(MakeJob("2", 2)).ok());
  EXPECT_EQ(ListAll(""), "2");
}

TEST_P(JobStoreConformanceTest, FindInProjectMatchesTheWholeProjectAndIdInAnyLocation) {
  CustomJob a = MakeJob("7", 1);
  a.name = "projects/p/locations/europe-west4/customJobs/7";
  CustomJob b = MakeJob("8", 2);
  b.name = "projects/pp/locations/l/customJobs/8";
  CustomJob c = MakeJob("77", 3);
  c.name = "projects/p/locations/l/customJobs/77";
  for (const auto& j : {a, b, c}) ASSERT_TRUE(store_->Create(j).ok());
  std::string got;
  for (auto [project, id] :
       std::vector<std::pair<std::string, std::string>>{{"p", "7"},
                                                        {"p", "77"},
                                                        {"pp", "8"},
                                                        {"p", "8"},
                                                        {"q", "7"},
                                                        {"p", "*"},
                                                        {"*", "7"},
                                                        {"p", "?"},
                                                        {"p/locations/europe-west4", "7"}}) {
    auto r = store_->FindInProject(project, id);
    got += r.ok() ? r->name : std::string(StatusCodeName(r.status().code()));
    got += "\n";
  }
  EXPECT_EQ(got,
            "projects/p/locations/europe-west4/customJobs/7\n"
            "projects/p/locations/l/customJobs/77\n"
            "projects/pp/locations/l/customJobs/8\n"
            "NOT_FOUND\nNOT_FOUND\nNOT_FOUND\nNOT_FOUND\nNOT_FOUND\nNOT_FOUND\n");
}

TEST_P(JobStoreConformanceTest, FiltersFollowTheVertexSyntax) {
  ASSERT_TRUE(
      store_->Create(MakeJob("1", 1000, JobState::kSucceeded, "my_job_a", {{"team", "nlp"}})).ok());
  ASSERT_TRUE(
      store_->Create(MakeJob("2", 2000, JobState::kFailed, "my_job_b", {{"team", "cv"}})).ok());
  ASSERT_TRUE(store_->Create(MakeJob("3", 3000, JobState::kRunning, "other", {})).ok());
  ASSERT_TRUE(
      store_->Create(MakeJob("4", 4000, JobState::kSucceeded, "x[my_job]?", {{"env", "dev"}}))
          .ok());
  std::vector<std::pair<std::string, std::string>> cases = {
      {R"(state="JOB_STATE_SUCCEEDED")", "4 1"},
      {R"(state!=JOB_STATE_SUCCEEDED)", "3 2"},
      {R"(state="JOB_STATE_SUCCEEDED" AND display_name:"my_job_*")", "1"},
      {R"(display_name:"my_job")", "4 2 1"},
      {R"(display_name:"*]?")", "4"},
      {R"(display_name="other")", "3"},
      {R"(displayName!="other")", "4 2 1"},
      {R"(create_time>"1970-01-01T00:33:20Z")", "4 3"},
      {R"(create_time<="1970-01-01T00:33:20Z")", "2 1"},
      {R"(labels.team=nlp)", "1"},
      {R"(labels.team:*)", "2 1"},
      {R"(labels.team!=nlp)", "4 3 2"},
      {R"(NOT labels.team:*)", "4 3"},
      {R"(-labels.team:*)", "4 3"},
      {R"(labels.team:"c*")", "2"},
      {R"(state=JOB_STATE_RUNNING OR labels.team=cv)", "3 2"},
      {R"(state=JOB_STATE_SUCCEEDED labels.env=dev)", "4"},
      {R"(state=JOB_STATE_SUCCEEDED AND labels.team=nlp OR labels.env=dev)", "4 1"},
      {R"((state=JOB_STATE_FAILED OR state=JOB_STATE_RUNNING) AND NOT display_name:other)", "2"},
  };
  std::string report;
  for (const auto& [filter, want] : cases) {
    std::string got = ListAll(filter, 1);
    if (got != want) report += filter + " -> '" + got + "', want '" + want + "'\n";
  }
  EXPECT_EQ(report, "");
}

TEST_P(JobStoreConformanceTest, BadFiltersAndTokensAreInvalidArgument) {
  std::string report;
  for (std::string filter :
       {"state=RUNNING", "colour=red", "state<JOB_STATE_RUNNING", "(state=JOB_STATE_RUNNING",
        "create_time>yesterday", "display_name=\"x", "state="}) {
    auto r = store_->List({"projects/p/locations/l", filter, 0, ""});
    if (r.ok() || r.status().code() != StatusCode::kInvalidArgument ||
        !r.status().message().starts_with("filter: ")) {
      report += filter + " -> " + (r.ok() ? "OK" : r.status().ToString()) + "\n";
    }
  }
  auto bad_token = store_->List({"projects/p/locations/l", "", 0, "zz"});
  EXPECT_EQ(bad_token.status().code(), StatusCode::kInvalidArgument);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(store_->Create(MakeJob(std::to_string(i), i)).ok());
  auto page = store_->List({"projects/p/locations/l", "", 1, ""});
  auto replay =
      store_->List({"projects/p/locations/l", "state=JOB_STATE_QUEUED", 1, page->next_page_token});
  EXPECT_EQ(replay.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(report, "");
}

TEST_P(JobStoreConformanceTest, ListUnfinishedReturnsNonTerminalJobsOldestFirst) {
  ASSERT_TRUE(store_->Create(MakeJob("1", 1, JobState::kRunning)).ok());
  ASSERT_TRUE(store_->Create(MakeJob("2", 2, JobState::kSucceeded)).ok());
  ASSERT_TRUE(store_->Create(MakeJob("3", 3, JobState::kQueued)).ok());
  ASSERT_TRUE(store_->Create(MakeJob("4", 4, JobState::kCancelled)).ok());
  ASSERT_TRUE(store_->Create(MakeJob("5", 5, JobState::kCancelling)).ok());
  auto r = store_->ListUnfinished();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Ids(*r), "1 3 5");
}

TEST_P(JobStoreConformanceTest, CountJobsByParentNamesEveryParentWithItsJobs) {
  CustomJob elsewhere = MakeJob("3", 300);
  elsewhere.name = "projects/q/locations/europe-west4/customJobs/3";
  ASSERT_TRUE(store_->Create(MakeJob("1", 100)).ok());
  ASSERT_TRUE(store_->Create(MakeJob("2", 200)).ok());
  ASSERT_TRUE(store_->Create(elsewhere).ok());
  auto counts = store_->CountJobsByParent();
  ASSERT_TRUE(counts.ok()) << counts.status();
  std::string got;
  for (const ParentCount& c : *counts) got += c.parent + "=" + std::to_string(c.count) + " ";
  EXPECT_EQ(got, "projects/p/locations/l=2 projects/q/locations/europe-west4=1 ");
}

TEST_P(JobStoreConformanceTest, CountJobsByStateCountsFinishedJobsToo) {
  ASSERT_TRUE(store_->Create(MakeJob("1", 100, JobState::kSucceeded)).ok());
  ASSERT_TRUE(store_->Create(MakeJob("2", 200, JobState::kRunning)).ok());
  ASSERT_TRUE(store_->Create(MakeJob("3", 300, JobState::kSucceeded)).ok());
  auto counts = store_->CountJobsByState();
  ASSERT_TRUE(counts.ok()) << counts.status();
  std::string got;
  for (const StateCount& c : *counts) {
    got += std::to_string(c.state) + "=" + std::to_string(c.count) + " ";
  }
  EXPECT_EQ(got, "3=1 4=2 ");  // RUNNING, SUCCEEDED
}

}  // namespace trainyard::store
