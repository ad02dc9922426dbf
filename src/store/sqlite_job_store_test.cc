#include "store/sqlite_job_store.h"

#include "common/time.h"
#include "spec/custom_job_json.h"
#include "store/job_store_conformance.h"
#include "store/resource_store_conformance.h"
#include "store/tuning_job_store_conformance.h"
#include "testing/test_util.h"

namespace trainyard::store {
namespace {

INSTANTIATE_TEST_SUITE_P(Sqlite, ResourceStoreConformanceTest,
                         ::testing::Values([](const std::filesystem::path& dir) {
                           auto s = SqliteJobStore::Open(dir / "jobs.db");
                           return s.ok() ? std::unique_ptr<ResourceStore>(std::move(s).value())
                                         : nullptr;
                         }));

INSTANTIATE_TEST_SUITE_P(Sqlite, JobStoreConformanceTest,
                         ::testing::Values([](const std::filesystem::path& dir) {
                           auto s = SqliteJobStore::Open(dir / "jobs.db");
                           return s.ok() ? std::unique_ptr<JobStore>(std::move(s).value())
                                         : nullptr;
                         }));

INSTANTIATE_TEST_SUITE_P(Sqlite, TuningJobStoreConformanceTest,
                         ::testing::Values([](const std::filesystem::path& dir) {
                           auto s = SqliteJobStore::Open(dir / "jobs.db");
                           return s.ok() ? std::unique_ptr<TuningJobStore>(std::move(s).value())
                                         : nullptr;
                         }));

TEST(SqliteJobStoreTest, JobsSurviveReopen) {
  auto dir = testing::MakeTestDir();
  {
    auto store = SqliteJobStore::Open(dir / "jobs.db");
    ASSERT_TRUE(store.ok()) << store.status();
    spec::CustomJob job;
    job.name = "projects/p/locations/l/customJobs/7";
    job.display_name = "persist";
    job.state = spec::JobState::kRunning;
    job.create_time = std::chrono::system_clock::now();
    ASSERT_TRUE((*store)->Create(job).ok());
  }
  auto store = SqliteJobStore::Open(dir / "jobs.db");
  ASSERT_TRUE(store.ok());
  auto unfinished = (*store)->ListUnfinished();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 1u);
  EXPECT_EQ((*unfinished)[0].display_name, "persist");
}

TEST(SqliteJobStoreTest, NotADatabaseIsDataLoss) {
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "jobs.db", std::string(4096, 'x'));
  EXPECT_EQ(SqliteJobStore::Open(dir / "jobs.db").status().code(), StatusCode::kDataLoss);
}

// Custom jobs and tuning jobs share the database and its label table, never each other's lists.
TEST(SqliteJobStoreTest, TuningJobsSurviveReopenApartFromCustomJobs) {
  auto dir = testing::MakeTestDir();
  {
    auto store = SqliteJobStore::Open(dir / "jobs.db");
    ASSERT_TRUE(store.ok()) << store.status();
    spec::CustomJob job;
    job.name = "projects/p/locations/l/customJobs/1";
    job.create_time = FromUnixMicros(1);
    job.labels = {{"team", "nlp"}};
    ASSERT_TRUE((*store)->Create(job).ok());
    TuningJobRecord r;
    r.job.name = "projects/p/locations/l/hyperparameterTuningJobs/2";
    r.job.create_time = FromUnixMicros(2);
    r.job.labels = {{"team", "nlp"}};
    r.runtime = {{"runner", {{"x", 1}}}};
    ASSERT_TRUE((*store)->CreateTuningJob(r).ok());
  }
  auto store = SqliteJobStore::Open(dir / "jobs.db");
  ASSERT_TRUE(store.ok());
  auto jobs = (*store)->List({"projects/p/locations/l", "labels.team=nlp", 0, ""});
  auto tuning = (*store)->ListTuningJobs({"projects/p/locations/l", "labels.team=nlp", 0, ""});
  auto record = (*store)->GetTuningJob("projects/p/locations/l/hyperparameterTuningJobs/2");
  ASSERT_TRUE(jobs.ok() && tuning.ok() && record.ok());
  EXPECT_EQ(std::to_string(jobs->jobs.size()) + " " + jobs->jobs[0].Id() + " " +
                std::to_string(tuning->jobs.size()) + " " + tuning->jobs[0].Id() + " " +
                record->runtime.dump(),
            R"(1 1 1 2 {"runner":{"x":1}})");
}

}  // namespace
}  // namespace trainyard::store
