// SqliteStudyStore: StudyStore in its own SQLite file (<data-dir>/studies.db), separate from the
// job database so the two subsystems never share a schema. WAL journal; each call is one
// statement in its own transaction (a record is a single row), so a change is all-or-nothing.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>

#include "study/study_store.h"

struct sqlite3;

namespace trainyard::study {

class SqliteStudyStore : public StudyStore {
 public:
  // Opens or creates the database. `full_sync`: PRAGMA synchronous=FULL (survives power loss),
  // else NORMAL (survives process crashes). UNAVAILABLE/DATA_LOSS when it cannot be opened.
  static StatusOr<std::unique_ptr<SqliteStudyStore>> Open(const std::filesystem::path& path,
                                                          bool full_sync = false);
  ~SqliteStudyStore() override;

  Status Insert(const StudyRecord& record) override;
  Status Update(const StudyRecord& record) override;
  StatusOr<StudyRecord> Get(const std::string& name) const override;
  StatusOr<std::vector<StudyRecord>> List(const std::string& parent) const override;
  Status Delete(const std::string& name) override;

 private:
  explicit SqliteStudyStore(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql);

  mutable std::mutex mu_;  // one connection, used by one thread at a time
  sqlite3* db_;
};

}  // namespace trainyard::study
