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

// 4: model versions, one row each (controller/model_registry.h). Until now a model's record held
// every version in runtime.versions, one row rewritten on every change; each entry becomes a
// record of kind 'modelVersions' named <model>/versions/<versionId> under its model (its times,
// display name and labels as columns, labels in job_labels; times kept to the millisecond, which
// is all SQLite's strftime reads), and the model keeps nextVersion.
constexpr std::string_view kModelVersionRows = R"sql(
WITH v AS (
  SELECT m.name AS model, m.create_us AS model_create_us, m.update_us AS model_update_us,
         e.value AS entry, json_extract(e.value, '$.versionId') AS id,
         json_extract(e.value, '$.versionCreateTime') AS created,
         json_extract(e.value, '$.versionUpdateTime') AS updated
  FROM resources AS m, json_each(m.runtime, '$.versions') AS e
  WHERE m.kind = 'models'),
t AS (
  SELECT *,
    CAST(strftime('%s', created) AS INTEGER) * 1000000 + CAST(round((strftime('%f', created)
      - CAST(strftime('%S', created) AS INTEGER)) * 1000) AS INTEGER) * 1000 AS created_us,
    CAST(strftime('%s', updated) AS INTEGER) * 1000000 + CAST(round((strftime('%f', updated)
      - CAST(strftime('%S', updated) AS INTEGER)) * 1000) AS INTEGER) * 1000 AS updated_us
  FROM v)
INSERT INTO resources(name, kind, parent, state, display_name, create_us, update_us, json, runtime)
SELECT model || '/versions/' || id, 'modelVersions', model, 0,
  COALESCE(json_extract(entry, '$.displayName'), ''),
  COALESCE(created_us, model_create_us), COALESCE(updated_us, created_us, model_update_us),
  json_object('labels', json(COALESCE(json_extract(entry, '$.labels'), '{}')),
              'body', json(entry)),
  '{}'
FROM t;
INSERT INTO job_labels(name, key, value)
SELECT m.name || '/versions/' || json_extract(e.value, '$.versionId'), l.key, l.value
FROM resources AS m, json_each(m.runtime, '$.versions') AS e, json_each(e.value, '$.labels') AS l
WHERE m.kind = 'models';
UPDATE resources SET runtime = json_remove(runtime, '$.versions') WHERE kind = 'models';
CREATE INDEX resources_by_kind_parent ON resources(kind, parent);
)sql";

constexpr SchemaStep kJobsDbSteps[] = {
    {1, "jobs and job_labels tables", kJobsTables},
    {2, "tuning_jobs table", kTuningJobsTable},
    {3, "resources table", kResourcesTable},
    {4, "model versions, one row each", kModelVersionRows},
};

}  // namespace

std::span<const SchemaStep> JobsDbSchema() { return kJobsDbSteps; }

}  // namespace trainyard::store
