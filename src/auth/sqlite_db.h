// A small owner of one SQLite connection for the auth database (tokens and the audit log share
// <data-dir>/auth.db): WAL and a busy timeout so `trainyard auth ...` can write while the server
// runs. Statements are the server's one sqlite::Stmt (sqlite/sqlite.h).
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
  // Opens (creating) `path` in WAL mode and runs `schema` (CREATE ... IF NOT EXISTS statements).
  // UNAVAILABLE when the file cannot be opened or the schema fails.
  static StatusOr<std::unique_ptr<SqliteDb>> Open(const std::filesystem::path& path,
                                                  const std::string& schema);
  ~SqliteDb();

  sqlite3* get() { return db_; }
  // UNAVAILABLE naming `what` and SQLite's message.
  Status Error(const std::string& what) const;

 private:
  explicit SqliteDb(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::filesystem::path path_;
};

// Statements are sqlite::Stmt (sqlite/sqlite.h) on get().

}  // namespace trainyard::auth
