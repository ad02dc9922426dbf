#include "store/jobs_db_schema.h"

#include <string_view>

namespace trainyard::store {
namespace {

using sqlite::SchemaStep;

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

}  // namespace

std::span<const SchemaStep> JobsDbSchema() { return kJobsDbSteps; }

}  // namespace trainyard::store
