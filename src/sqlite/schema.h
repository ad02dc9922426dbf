// Schema upgrades of a SQLite database: an ordered list of steps, each bringing the
// schema from version N-1 to N (PRAGMA user_version). Open() runs every step above the file's
// version, each in its own transaction together with its version bump, so a crash mid-upgrade
// leaves the file at the last completed step and the next start continues from there. A file
// from a newer Trainyard (version above the last step) is refused, never downgraded.
//
// Before the first step runs on a database that holds anything (its version above 0, or any
// table in it: a file of the releases before versioned upgrades), Migrate copies it to
// "<file>.pre-v<N>.bak" next to it (N: the version it was at) with SQLite's online backup API
// (sqlite/backup.h: temp name, fsync, rename, 0600). No copy, no upgrade: an upgrade that cannot
// write its backup (a full disk) is refused and the file stays as it was. A fresh, empty database
// gets no backup. After an upgrade only the newest kKeptPreUpgradeBackups copies of the file are
// kept (the one just taken and the one before it); older ones are removed. Rolling back = stopping
// the server, putting the .bak in place of the file and starting the binary that wrote it
// (docs/operations.md).
//
// Each database owns its list of steps (jobs.db: store/jobs_db_schema.h); steps already released
// never change.
#pragma once

#include <sqlite3.h>

#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::sqlite {

inline constexpr int kKeptPreUpgradeBackups = 2;

struct SchemaStep {
  int version;            // the user_version once this step has run: 1, 2, 3, ... in order
  std::string_view what;  // for errors: "tuning_jobs table"
  std::string_view sql;   // the statements of the step, run in one transaction
};

// The version the file is at (PRAGMA user_version).
StatusOr<int> SchemaVersion(sqlite3* db);

// Runs every step of `steps` above the database's version, in order, each in one transaction
// (BEGIN IMMEDIATE; its SQL; PRAGMA user_version = step.version; COMMIT). `db_name` is for errors.
// Backs up first as above, when a step will run on a database that is not fresh and not in memory.
// FAILED_PRECONDITION when the database's version is above the last step (a newer Trainyard wrote
// it); UNAVAILABLE naming the backup path and the free space when the backup cannot be written
// (nothing upgraded); UNAVAILABLE naming the step when one fails (the database stays at the
// previous version).
Status Migrate(sqlite3* db, std::span<const SchemaStep> steps, const std::string& db_name);

// "<file>.pre-v<N>.bak": where Migrate puts the copy of `file` taken at version `version`.
std::string PreUpgradeBackupPath(const std::string& file, int version);

}  // namespace trainyard::sqlite
