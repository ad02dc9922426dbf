#include "store/schema_migrations.h"

#include "store/sqlite_util.h"

namespace trainyard::store {
namespace {

// 1: custom jobs and their labels (filters on labels.KEY join job_labels).
constexpr std::string_view kJobsTables = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  name TEXT PRIMARY KEY,
  parent TEXT NOT NULL,
  state INTEGER NOT NULL,
  display_name TEXT NOT NULL,
  create_us INTEGER NOT NULL,
  update_us INTEGER NOT NULL,
  json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_parent_time ON jobs(parent, create_us DESC, name DESC);
CREATE INDEX IF NOT EXISTS jobs_by_parent_state_time
  ON jobs(parent, state, create_us DESC, name DESC);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state);
CREATE TABLE IF NOT EXISTS job_labels (
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (name, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_labels_by_key ON job_labels(key, value);
)sql";

// 2: HyperparameterTuningJobs (their labels share job_labels, keyed by the resource name).
constexpr std::string_view kTuningJobsTable = R"sql(
CREATE TABLE IF NOT EXISTS tuning_jobs (
  name TEXT PRIMARY KEY,
  parent TEXT NOT NULL,
  state INTEGER NOT NULL,
  display_name TEXT NOT NULL,
  create_us INTEGER NOT NULL,
  update_us INTEGER NOT NULL,
  json TEXT NOT NULL,
  runtime TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tuning_jobs_by_parent_time
  ON tuning_jobs(parent, create_us DESC, name DESC);
)sql";

// 3: every resource of the shared resource layer, operations included (resource_store.h); labels
// in job_labels.
constexpr std::string_view kResourcesTable = R"sql(
CREATE TABLE resources (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  parent TEXT NOT NULL,
  state INTEGER NOT NULL,
  display_name TEXT NOT NULL,
  create_us INTEGER NOT NULL,
  update_us INTEGER NOT NULL,
  json TEXT NOT NULL,
  runtime TEXT NOT NULL
);
CREATE INDEX resources_by_kind_parent_time ON resources(kind, parent, create_us DESC, name DESC);
)sql";

constexpr SchemaStep kJobsDbSteps[] = {
    {1, "jobs and job_labels tables", kJobsTables},
    {2, "tuning_jobs table", kTuningJobsTable},
    {3, "resources table", kResourcesTable},
};

Status Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return UnavailableError(msg);
  }
  return Status::Ok();
}

}  // namespace

std::span<const SchemaStep> JobsDbSchema() { return kJobsDbSteps; }

StatusOr<int> SchemaVersion(sqlite3* db) {
  Stmt version(db, "PRAGMA user_version");
  TY_RETURN_IF_ERROR(version.Prepared());
  if (version.Step() != SQLITE_ROW) return version.Error("PRAGMA user_version");
  return static_cast<int>(version.Int(0));
}

Status Migrate(sqlite3* db, std::span<const SchemaStep> steps, const std::string& db_name) {
  TY_ASSIGN_OR_RETURN(int version, SchemaVersion(db));
  const int latest = steps.empty() ? 0 : steps.back().version;
  if (version > latest) {
    return FailedPreconditionError(db_name + " was written by a newer Trainyard (schema " +
                                   std::to_string(version) + " > " + std::to_string(latest) +
                                   "); upgrade trainyard");
  }
  for (const SchemaStep& step : steps) {
    if (step.version <= version) continue;
    Transaction tx(db);
    TY_RETURN_IF_ERROR(tx.Began());
    // user_version lives in the database header, so its bump commits or rolls back with the step.
    Status applied = Exec(db, std::string(step.sql) +
                                  "\nPRAGMA user_version = " + std::to_string(step.version) + ";");
    if (applied.ok()) applied = tx.Commit();
    if (!applied.ok()) {
      return UnavailableError("cannot upgrade " + db_name + " to schema " +
                              std::to_string(step.version) + " (" + std::string(step.what) +
                              "): " + applied.message() + "; it stays at schema " +
                              std::to_string(version));
    }
    version = step.version;
  }
  return Status::Ok();
}

}  // namespace trainyard::store
