#include "sqlite/schema.h"

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

}  // namespace

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

}  // namespace trainyard::sqlite
