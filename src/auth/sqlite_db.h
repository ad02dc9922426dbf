// A small owner of one SQLite connection for the auth database (tokens and the audit log share
// <data-dir>/auth.db): WAL, a busy timeout so `trainyard auth ...` can write while the server
// runs, and statements that finalize on every path.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/status.h"

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

class Stmt {
 public:
  Stmt(SqliteDb& db, const char* sql);
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool ok() const { return rc_ == SQLITE_OK; }
  void Bind(int i, const std::string& s);
  void Bind(int i, int64_t v);
  int Step() { return sqlite3_step(stmt_); }
  std::string Text(int i) const;
  int64_t Int(int i) const { return sqlite3_column_int64(stmt_, i); }
  bool IsNull(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

}  // namespace trainyard::auth
