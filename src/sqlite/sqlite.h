// The one set of SQLite helpers every database of the server uses (jobs.db through store/,
// auth.db through auth/): a prepared statement and a transaction that finalize / roll back on
// every path, so an early return never leaks a statement or leaves a transaction open; and
// versioned schema upgrades (schema.h).
#pragma once

#include <sqlite3.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>

#include "common/disk_fault.h"
#include "common/status.h"

namespace trainyard::sqlite {

// The Status of a failed SQLite call `what` on `db`: a full or read-only file system is
// RESOURCE_EXHAUSTED naming the data dir and its free space (common/disk_fault.h; the database's
// path goes to the server log; an I/O error counts as one when a write probe beside the database
// fails so); SQLITE_BUSY and other I/O errors UNAVAILABLE; a corrupt file
// DATA_LOSS; the rest INTERNAL. Every database of the server lives in the data dir.
inline Status ErrorOf(sqlite3* db, const std::string& what) {
  const int code = sqlite3_errcode(db);
  const std::string msg = what + ": " + sqlite3_errmsg(db);
  // SQLite reports a full disk as SQLITE_FULL and a read-only one as SQLITE_READONLY or as an
  // I/O error whose errno is EROFS; the errno also tells inodes from bytes.
  int err = sqlite3_system_errno(db);
  if (code == SQLITE_FULL && err != ENOSPC && err != EDQUOT) err = ENOSPC;
  if (code == SQLITE_READONLY) err = EROFS;
  const char* file = sqlite3_db_filename(db, "main");
  const std::filesystem::path path = file != nullptr ? file : "";
  // ext4 that stopped writes after an error may give SQLite an errno that says nothing (its
  // "disk I/O error"): a write probe beside the database tells a read-only or full disk.
  if (code == SQLITE_IOERR && ClassifyWriteError(err, path) == DiskFault::kNone &&
      file != nullptr && *file != '\0') {
    if (const int probed = WriteProbeErrno(path.parent_path()); probed != 0) err = probed;
  }
  if (code == SQLITE_FULL || code == SQLITE_READONLY || code == SQLITE_IOERR ||
      code == SQLITE_CANTOPEN) {
    if (DiskFault fault = ClassifyWriteError(err, path); fault != DiskFault::kNone) {
      return DiskFaultError(fault, kDataDirPlace, path, msg);
    }
  }
  if (code == SQLITE_FULL || code == SQLITE_IOERR || code == SQLITE_BUSY) {
    return UnavailableError(msg);
  }
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) return DataLossError(msg);
  return InternalError(msg);
}

// RAII prepared statement; errors become Status with the SQLite message.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Status Prepared() const {
    return rc_ == SQLITE_OK ? Status::Ok()
                            : InternalError(std::string("sqlite prepare: ") + sqlite3_errmsg(db_));
  }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  // SQLITE_ROW / SQLITE_DONE, or an error code.
  int Step() { return sqlite3_step(stmt_); }
  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t ? std::string(reinterpret_cast<const char*>(t),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  Status Error(const std::string& what) const { return ErrorOf(db_, what); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

// Rolls back unless committed; keeps every write path to one transaction.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {
    ok_ = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ~Transaction() {
    if (ok_ && !committed_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status Began() const { return ok_ ? Status::Ok() : ErrorOf(db_, "sqlite BEGIN"); }
  Status Commit() {
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
      return ErrorOf(db_, "sqlite COMMIT");
    }
    committed_ = true;
    return Status::Ok();
  }

 private:
  sqlite3* db_;
  bool ok_ = false;
  bool committed_ = false;
};

// Runs `sql` (any number of statements, e.g. a `sqlite3 .dump`) on the database file `path`,
// creating it. Tests build fixture databases with it.
inline Status ExecSqlOnFile(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  Status status = Status::Ok();
  char* err = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK ||
      sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    status = UnavailableError(path.string() + ": " + (err ? err : sqlite3_errmsg(db)));
  }
  sqlite3_free(err);
  sqlite3_close(db);
  return status;
}

}  // namespace trainyard::sqlite
