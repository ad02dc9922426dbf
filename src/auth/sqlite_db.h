// A small owner of one SQLite connection to the auth database (tokens and the audit log share
// <data-dir>/auth.db): WAL and a busy timeout so `trainyard auth ...` can write while the server
// runs, and the file brought to auth.db's current schema (auth_db_schema.h) on open. Statements
// are the server's one sqlite::Stmt (sqlite/sqlite.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/status.h"
#include "sqlite/sqlite.h"

namespace trainyard::auth {

class SqliteDb {
 public:
  // Opens (creating) `path` in WAL mode and runs the schema steps it lacks (AuthDbSchema()).
  // IO_ERROR when the file cannot be opened; FAILED_PRECONDITION when a newer Trainyard wrote it
  // (sqlite::Migrate's message, naming the file); UNAVAILABLE when a step fails.
  static StatusOr<std::unique_ptr<SqliteDb>> Open(const std::filesystem::path& path);
  ~SqliteDb();

  sqlite3* get() { return db_; }
  // IO_ERROR naming the file, `what` and SQLite's message.
  Status Error(const std::string& what) const;

 private:
  explicit SqliteDb(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::filesystem::path path_;
};

}  // namespace trainyard::auth
