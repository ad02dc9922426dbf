// The schema of <data-dir>/auth.db, step by step (sqlite/schema.h): access tokens and the audit
// log. SqliteDb::Open runs these steps, so whichever of TokenStore and AuditLog opens the file
// first brings it up to date. Adding a column or a table = appending a step here; released steps
// never change.
//
// Step 1 is the schema of the releases before versioned upgrades, which created their tables with
// IF NOT EXISTS and left user_version at 0: its SQL is idempotent, so such a file is adopted
// (step 1 finds its tables, keeps their rows and sets version 1) and only the later steps run.
#pragma once

#include <span>

#include "sqlite/schema.h"

namespace trainyard::auth {

// The steps of auth.db, oldest first.
std::span<const sqlite::SchemaStep> AuthDbSchema();

}  // namespace trainyard::auth
