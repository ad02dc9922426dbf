#include "study/sqlite_study_store.h"

#include <sqlite3.h>

#include "common/json_parse.h"

namespace trainyard::study {
namespace {

// Finalizes on every path, so an early return never leaks a statement.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() { return stmt_; }
  void Bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

Status SqlError(sqlite3* db, const std::string& what) {
  return IoError("studies database: " + what + ": " + sqlite3_errmsg(db));
}

std::string Column(sqlite3_stmt* s, int i) {
  const unsigned char* text = sqlite3_column_text(s, i);
  return text ? std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(s, i)) : "";
}

StatusOr<StudyRecord> ReadRow(sqlite3_stmt* s) {
  StudyRecord r;
  r.name = Column(s, 0);
  r.parent = Column(s, 1);
  r.create_us = sqlite3_column_int64(s, 2);
  StatusOr<nlohmann::json> data = ParseJson(Column(s, 3));
  if (data.ok()) r.data = std::move(*data);
  if (!data.ok() || !r.data.is_object()) {
    return DataLossError("studies database: the record of " + r.name + " is not valid JSON");
  }
  return r;
}

}  // namespace

StatusOr<std::unique_ptr<SqliteStudyStore>> SqliteStudyStore::Open(
    const std::filesystem::path& path, bool full_sync) {
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
  std::unique_ptr<SqliteStudyStore> store(new SqliteStudyStore(db));
  TY_RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL"));
  TY_RETURN_IF_ERROR(
      store->Exec(full_sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  TY_RETURN_IF_ERROR(store->Exec(
      "CREATE TABLE IF NOT EXISTS studies (name TEXT PRIMARY KEY, parent TEXT NOT NULL, "
      "create_us INTEGER NOT NULL, data TEXT NOT NULL)"));
  TY_RETURN_IF_ERROR(
      store->Exec("CREATE INDEX IF NOT EXISTS studies_by_parent ON studies(parent, create_us)"));
  return store;
}

SqliteStudyStore::~SqliteStudyStore() { sqlite3_close(db_); }

Status SqliteStudyStore::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return IoError(std::string("studies database: ") + sql + ": " + msg);
  }
  return Status::Ok();
}

Status SqliteStudyStore::Insert(const StudyRecord& record) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "INSERT INTO studies(name, parent, create_us, data) VALUES(?, ?, ?, ?)");
  if (!s.ok()) return SqlError(db_, "prepare insert");
  s.Bind(1, record.name);
  s.Bind(2, record.parent);
  s.Bind(3, record.create_us);
  s.Bind(4, record.data.dump());
  int rc = sqlite3_step(s.get());
  if (rc == SQLITE_CONSTRAINT) {
    return AlreadyExistsError("hyperparameterTuningJob " + record.name + " already exists");
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "insert " + record.name);
  return Status::Ok();
}

Status SqliteStudyStore::Update(const StudyRecord& record) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "UPDATE studies SET data = ? WHERE name = ?");
  if (!s.ok()) return SqlError(db_, "prepare update");
  s.Bind(1, record.data.dump());
  s.Bind(2, record.name);
  if (sqlite3_step(s.get()) != SQLITE_DONE) return SqlError(db_, "update " + record.name);
  if (sqlite3_changes(db_) == 0) {
    return NotFoundError("hyperparameterTuningJob " + record.name + " not found");
  }
  return Status::Ok();
}

StatusOr<StudyRecord> SqliteStudyStore::Get(const std::string& name) const {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT name, parent, create_us, data FROM studies WHERE name = ?");
  if (!s.ok()) return SqlError(db_, "prepare get");
  s.Bind(1, name);
  int rc = sqlite3_step(s.get());
  if (rc == SQLITE_DONE) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  if (rc != SQLITE_ROW) return SqlError(db_, "get " + name);
  return ReadRow(s.get());
}

StatusOr<std::vector<StudyRecord>> SqliteStudyStore::List(const std::string& parent) const {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT name, parent, create_us, data FROM studies WHERE ?1 = '' OR parent = ?1 "
         "ORDER BY create_us DESC, name DESC");
  if (!s.ok()) return SqlError(db_, "prepare list");
  s.Bind(1, parent);
  std::vector<StudyRecord> out;
  while (true) {
    int rc = sqlite3_step(s.get());
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return SqlError(db_, "list");
    TY_ASSIGN_OR_RETURN(StudyRecord r, ReadRow(s.get()));
    out.push_back(std::move(r));
  }
  return out;
}

Status SqliteStudyStore::Delete(const std::string& name) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "DELETE FROM studies WHERE name = ?");
  if (!s.ok()) return SqlError(db_, "prepare delete");
  s.Bind(1, name);
  if (sqlite3_step(s.get()) != SQLITE_DONE) return SqlError(db_, "delete " + name);
  if (sqlite3_changes(db_) == 0)
    return NotFoundError("hyperparameterTuningJob " + name + " not found");
  return Status::Ok();
}

}  // namespace trainyard::study
