#include "sqlite/schema.h"

#include <filesystem>
#include <map>

#include "sqlite/backup.h"
#include "sqlite/sqlite.h"

namespace trainyard::sqlite {
namespace {

Status Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return UnavailableError(msg);
  }
  return Status::Ok();
}

// True when the database holds nothing yet: version 0 and no table (a file just created).
StatusOr<bool> IsFresh(sqlite3* db, int version) {
  if (version > 0) return false;
  Stmt tables(db, "SELECT 1 FROM sqlite_master LIMIT 1");
  TY_RETURN_IF_ERROR(tables.Prepared());
  const int rc = tables.Step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return tables.Error("read sqlite_master");
  return rc == SQLITE_DONE;
}

// The copy an upgrade needs before it may run (schema.h).
Status BackupBeforeUpgrade(sqlite3* db, int version, int latest, const std::string& db_name) {
  const char* file = sqlite3_db_filename(db, "main");
  if (file == nullptr || *file == '\0') return Status::Ok();  // in memory: nothing to keep
  TY_ASSIGN_OR_RETURN(bool fresh, IsFresh(db, version));
  if (fresh) return Status::Ok();
  const std::string backup = PreUpgradeBackupPath(file, version);
  if (Status s = CopyDatabase(db, backup); !s.ok()) {
    return UnavailableError("refusing to upgrade " + db_name + " from schema " +
                            std::to_string(version) + " to " + std::to_string(latest) +
                            " without its backup " + backup + "; free space there and start " +
                            "again (" + s.message() + ")");
  }
  return Status::Ok();
}

// After an upgrade: the pre-upgrade copies of `file` but the newest kKeptPreUpgradeBackups go, so
// that years of upgrades do not keep a full copy each. Best effort: a copy that cannot be removed
// stays.
void PruneOldBackups(const std::string& file) {
  namespace fs = std::filesystem;
  const fs::path path(file);
  const std::string prefix = path.filename().string() + ".pre-v";
  std::map<int, fs::path, std::greater<>> copies;  // version -> file, newest first
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".bak")) continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 4);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    copies[std::stoi(digits)] = e.path();
  }
  int kept = 0;
  for (const auto& [version, copy] : copies) {
    if (++kept > kKeptPreUpgradeBackups) fs::remove(copy, ec);
  }
}

}  // namespace

std::string PreUpgradeBackupPath(const std::string& file, int version) {
  return file + ".pre-v" + std::to_string(version) + ".bak";
}

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
  if (version < latest) TY_RETURN_IF_ERROR(BackupBeforeUpgrade(db, version, latest, db_name));
  for (const SchemaStep& step : steps) {
    if (step.version <= version) continue;
    Transaction tx(db);
    TY_RETURN_IF_ERROR(tx.Began());
    // Another process (the server and `trainyard auth` open auth.db alike) may have run this step
    // between our first read and the write lock: read the version again under the lock.
    TY_ASSIGN_OR_RETURN(const int now_at, SchemaVersion(db));
    if (now_at >= step.version) {
      version = now_at;
      continue;  // tx rolls back: nothing was written
    }
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
  const char* file = sqlite3_db_filename(db, "main");
  if (file != nullptr && *file != '\0') PruneOldBackups(file);
  return Status::Ok();
}

}  // namespace trainyard::sqlite
