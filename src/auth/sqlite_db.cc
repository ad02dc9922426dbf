#include "auth/sqlite_db.h"

#include "auth/auth_db_schema.h"
#include "sqlite/schema.h"

namespace trainyard::auth {

StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return IoError("cannot open " + path.string() + ": " + msg);
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<SqliteDb> out(new SqliteDb(db, path));
  char* err = nullptr;
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", nullptr, nullptr,
                   &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return IoError(path.string() + ": cannot enable WAL: " + msg);
  }
  TY_RETURN_IF_ERROR(sqlite::Migrate(db, AuthDbSchema(), path.string()));
  return out;
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

Status SqliteDb::Error(const std::string& what) const {
  return IoError(path_.string() + ": " + what + ": " + sqlite3_errmsg(db_));
}

}  // namespace trainyard::auth
