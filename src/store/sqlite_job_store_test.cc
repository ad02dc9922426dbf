#include "store/sqlite_job_store.h"

#include "spec/custom_job_json.h"
#include "store/job_store_conformance.h"
#include "testing/test_util.h"

namespace trainyard::store {
namespace {

INSTANTIATE_TEST_SUITE_P(Sqlite, JobStoreConformanceTest,
                         ::testing::Values([](const std::filesystem::path& dir) {
                           auto s = SqliteJobStore::Open(dir / "jobs.db");
                           return s.ok() ? std::unique_ptr<JobStore>(std::move(s).value())
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

}  // namespace
}  // namespace trainyard::store
