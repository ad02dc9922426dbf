// The schema of jobs.db, step by step (sqlite/schema.h): custom jobs, HP-tuning jobs and the
// shared resource layer's `resources` table. Adding a table or a column for a resource = appending
// a step here. Steps 1 and 2 are the schema of the releases before versioned upgrades (they
// created their tables with IF NOT EXISTS and set the version themselves), so their SQL is
// idempotent: a file they wrote opens at version 2 and only the later steps run.
#pragma once

#include <span>

#include "sqlite/schema.h"

namespace trainyard::store {

// The steps of jobs.db, oldest first.
std::span<const sqlite::SchemaStep> JobsDbSchema();

}  // namespace trainyard::store
