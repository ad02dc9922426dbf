// jobs.db's schema steps (jobs_db_schema.h): a new database gets every step; a data dir written
// by the release before the resources table (schema 2, test/fixtures/jobs_db_v2) opens and
// upgrades with its jobs readable, its old self kept as jobs.db.pre-v2.bak; a newer database is
// refused untouched.
#include "store/jobs_db_schema.h"

#include <gtest/gtest.h>

#include "common/time.h"
#include "sqlite/sqlite.h"
#include "store/sqlite_job_store.h"
#include "testing/test_util.h"

namespace trainyard::store {
namespace {

// The tables of `path` and its version: "v4: jobs job_labels resources tuning_jobs".
std::string Tables(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return "cannot open";
  std::string out = "v" + std::to_string(sqlite::SchemaVersion(db).value_or(-1)) + ":";
  {
    sqlite::Stmt q(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (q.Step() == SQLITE_ROW) out += " " + q.Text(0);
  }
  sqlite3_close(db);
  return out;
}

TEST(JobsDbSchemaTest, ANewDatabaseGetsEveryStep) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(SqliteJobStore::Open(dir / "jobs.db").ok());
  EXPECT_EQ(Tables(dir / "jobs.db"), "v4: job_labels jobs resources tuning_jobs");
}

TEST(JobsDbSchemaTest, ADataDirOfSchema2OpensUpgradedWithItsJobsReadable) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(sqlite::ExecSqlOnFile(dir / "jobs.db", testing::ReadFileOrDie(testing::SourcePath(
                                                         "test/fixtures/jobs_db_v2/jobs.sql")))
                  .ok());
  ASSERT_EQ(Tables(dir / "jobs.db"), "v2: job_labels jobs tuning_jobs");
  auto store = SqliteJobStore::Open(dir / "jobs.db");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(Tables(dir / "jobs.db"), "v4: job_labels jobs resources tuning_jobs");
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
  // The file as it was before the upgrade, next to it (sqlite/schema.h).
  EXPECT_EQ(Tables(dir / "jobs.db.pre-v2.bak"), "v2: job_labels jobs tuning_jobs");
}

TEST(JobsDbSchemaTest, ADatabaseFromANewerTrainyardIsRefusedUntouched) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(
      sqlite::ExecSqlOnFile(dir / "jobs.db", "CREATE TABLE x(a); PRAGMA user_version = 99;").ok());
  auto store = SqliteJobStore::Open(dir / "jobs.db");
  EXPECT_EQ(store.status().ToString(),
            "FAILED_PRECONDITION: " + (dir / "jobs.db").string() +
                " was written by a newer Trainyard (schema 99 > 4); upgrade trainyard");
  EXPECT_EQ(Tables(dir / "jobs.db"), "v99: x");
}

// Issue 43: a model written by schema 3 kept all its versions in its runtime, one row rewritten on
// every change. Step 4 makes each version a row of kind modelVersions under its model (labels
// filterable, times from the entry) and leaves the model its nextVersion.
TEST(JobsDbSchemaTest, Schema4SplitsAModelsVersionsIntoRows) {
  auto dir = testing::MakeTestDir();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "jobs.db").c_str(), &db), SQLITE_OK);
  ASSERT_TRUE(sqlite::Migrate(db, JobsDbSchema().first(3), "jobs.db").ok());
  const std::string m = "projects/p/locations/l/models/m";
  const nlohmann::json runtime = {{"nextVersion", 4},
                                  {"versions",
                                   {{{"displayName", "m"},
                                     {"versionId", "1"},
                                     {"versionAliases", {"default"}},
                                     {"versionCreateTime", "2026-01-02T03:04:05.250Z"}},
                                    {{"displayName", "m"},
                                     {"versionId", "3"},
                                     {"labels", {{"stage", "prod"}}},
                                     {"versionCreateTime", "2026-01-03T00:00:00Z"},
                                     {"versionUpdateTime", "2026-01-04T00:00:00Z"}}}}};
  const std::string insert =
      "INSERT INTO resources VALUES ('" + m +
      "', 'models', 'projects/p/locations/l', 0, 'm', 1, 2, "
      "'{\"labels\": {}, \"body\": {\"displayName\": \"m\", \"versionId\": \"1\"}}', '" +
      runtime.dump() + "')";
  ASSERT_EQ(sqlite3_exec(db, insert.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  auto store = SqliteJobStore::Open(dir / "jobs.db");
  ASSERT_TRUE(store.ok()) << store.status();
  std::string seen;
  auto family =
      (*store)->MutateResourceFamily("models", m, "modelVersions", [&](ResourceFamily& f) {
        seen = f.record.runtime.dump() + " |";
        for (const auto& v : f.children) {
          seen += " " + v.name.substr(m.size()) + " " + v.display_name + " " +
                  FormatTimestamp(*v.create_time) + " " + FormatTimestamp(*v.update_time) + " " +
                  v.body.value("versionAliases", nlohmann::json::array()).dump() + ";";
        }
        return Status::Ok();
      });
  ASSERT_TRUE(family.ok()) << family.status();
  auto prod = (*store)->ListResources("modelVersions", {m, "labels.stage=prod", 0, ""},
                                      StateVocabulary::JobStates());
  ASSERT_TRUE(prod.ok()) << prod.status();
  EXPECT_EQ(Tables(dir / "jobs.db") + " | " + seen + " | " + prod->jobs.at(0).Id(),
            "v4: job_labels jobs resources tuning_jobs | {\"nextVersion\":4} | /versions/1 m "
            "2026-01-02T03:04:05.250000Z 2026-01-02T03:04:05.250000Z [\"default\"]; "
            "/versions/3 m 2026-01-03T00:00:00.000000Z 2026-01-04T00:00:00.000000Z []; | 3");
}

}  // namespace
}  // namespace trainyard::store
