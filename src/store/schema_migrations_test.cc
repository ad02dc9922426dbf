// Schema upgrades of jobs.db: every step once, in order, each atomic; a data dir written by the
// release before the resources table (schema 2, test/fixtures/jobs_db_v2) opens and upgrades.
#include "store/schema_migrations.h"

#include <gtest/gtest.h>

#include "store/sqlite_job_store.h"
#include "store/sqlite_util.h"
#include "testing/test_util.h"

namespace trainyard::store {
namespace {

// The tables of `path` and its version: "v3: jobs job_labels resources tuning_jobs".
std::string Tables(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return "cannot open";
  std::string out = "v" + std::to_string(SchemaVersion(db).value_or(-1)) + ":";
  {
    Stmt q(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (q.Step() == SQLITE_ROW) out += " " + q.Text(0);
  }
  sqlite3_close(db);
  return out;
}

Status MigrateFile(const std::filesystem::path& path, std::span<const SchemaStep> steps) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return UnavailableError("open");
  Status s = Migrate(db, steps, path.filename().string());
  sqlite3_close(db);
  return s;
}

TEST(SchemaMigrationsTest, ANewDatabaseGetsEveryStep) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(SqliteJobStore::Open(dir / "jobs.db").ok());
  EXPECT_EQ(Tables(dir / "jobs.db"), "v3: job_labels jobs resources tuning_jobs");
}

TEST(SchemaMigrationsTest, ADataDirOfSchema2OpensUpgradedWithItsJobsReadable) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(ExecSqlOnFile(dir / "jobs.db", testing::ReadFileOrDie(testing::SourcePath(
                                                 "test/fixtures/jobs_db_v2/jobs.sql")))
                  .ok());
  ASSERT_EQ(Tables(dir / "jobs.db"), "v2: job_labels jobs tuning_jobs");
  auto store = SqliteJobStore::Open(dir / "jobs.db");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(Tables(dir / "jobs.db"), "v3: job_labels jobs resources tuning_jobs");
  std::string seen;
  auto jobs = (*store)->List({"projects/p1/locations/us-central1", "labels.team=nlp", 0, ""});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  for (const auto& j : jobs->jobs) {
    seen += j.display_name + " " + std::string(spec::JobStateName(j.state)) + "; ";
  }
  auto studies = (*store)->ListTuningJobs({"projects/p1/locations/us-central1", "", 0, ""});
  ASSERT_TRUE(studies.ok()) << studies.status();
  for (const auto& s : studies->jobs) {
    auto record = (*store)->GetTuningJob(s.name);
    ASSERT_TRUE(record.ok()) << record.status();
    seen += s.display_name + " " + std::to_string(record->job.trials.size()) + " trials; ";
  }
  EXPECT_EQ(seen, "fixture-job JOB_STATE_SUCCEEDED; fixture-study 2 trials; ");
}

TEST(SchemaMigrationsTest, ADatabaseFromANewerTrainyardIsRefusedUntouched) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(ExecSqlOnFile(dir / "jobs.db", "CREATE TABLE x(a); PRAGMA user_version = 99;").ok());
  auto store = SqliteJobStore::Open(dir / "jobs.db");
  EXPECT_EQ(store.status().ToString(),
            "FAILED_PRECONDITION: " + (dir / "jobs.db").string() +
                " was written by a newer Trainyard (schema 99 > 3); upgrade trainyard");
  EXPECT_EQ(Tables(dir / "jobs.db"), "v99: x");
}

TEST(SchemaMigrationsTest, AFailingStepLeavesTheFileAtThePreviousStepWithNothingHalfDone) {
  auto dir = testing::MakeTestDir();
  const SchemaStep steps[] = {
      {1, "a", "CREATE TABLE a(x);"},
      {2, "b", "CREATE TABLE b(x); CREATE TABLE a(y);"},  // the second statement fails
      {3, "c", "CREATE TABLE c(x);"},
  };
  Status s = MigrateFile(dir / "t.db", steps);
  EXPECT_EQ(s.ToString(),
            "UNAVAILABLE: cannot upgrade t.db to schema 2 (b): table a already exists; it stays "
            "at schema 1");
  EXPECT_EQ(Tables(dir / "t.db"), "v1: a");
  const SchemaStep fixed[] = {steps[0], {2, "b", "CREATE TABLE b(x);"}, steps[2]};
  ASSERT_TRUE(MigrateFile(dir / "t.db", fixed).ok());
  ASSERT_TRUE(MigrateFile(dir / "t.db", fixed).ok());  // nothing left to run
  EXPECT_EQ(Tables(dir / "t.db"), "v3: a b c");
}

}  // namespace
}  // namespace trainyard::store
