// SqliteJobStore: the default JobStore, one SQLite database file (WAL mode).
//
// Durability: every Create/Mutate/Delete is one transaction. With Sync::kNormal (the default) a
// committed change survives a crash or kill -9 of the server process (WAL frames are in the OS
// page cache before COMMIT returns) but the last transactions may be lost on power failure; with
// Sync::kFull each commit is fsynced. Schema: table `jobs` (name, parent, state, display_name,
// create_us, update_us, json — the job in its proto3-JSON stored form) and `job_labels`
// (name, key, value) for label filters; PRAGMA user_version is the schema version.
//
// Thread-safety: all methods are serialized on one connection by a mutex.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/job_store.h"

struct sqlite3;

namespace trainyard::store {

class SqliteJobStore : public JobStore {
 public:
  enum class Sync { kNormal, kFull };

  // Opens or creates the database. UNAVAILABLE if the file cannot be opened, DATA_LOSS if it is not
  // a Trainyard database, FAILED_PRECONDITION if it was written by a newer schema version.
  static StatusOr<std::unique_ptr<SqliteJobStore>> Open(const std::filesystem::path& path,
                                                        Sync sync = Sync::kNormal);
  ~SqliteJobStore() override;

  Status Create(const spec::CustomJob& job) override;
  StatusOr<spec::CustomJob> Get(const std::string& name) override;
  StatusOr<spec::CustomJob> Mutate(const std::string& name,
                                   const std::function<Status(spec::CustomJob&)>& mutate) override;
  Status Delete(const std::string& name) override;
  StatusOr<ListResult> List(const ListQuery& query) override;
  StatusOr<std::vector<spec::CustomJob>> ListUnfinished() override;

  // Inserts many jobs in one transaction (benchmarks and imports). Same checks as Create.
  Status CreateBatch(const std::vector<spec::CustomJob>& jobs);

 private:
  explicit SqliteJobStore(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql);
  Status InsertLocked(const spec::CustomJob& job);
  Status WriteLabelsLocked(const spec::CustomJob& job);
  StatusOr<spec::CustomJob> GetLocked(const std::string& name);

  std::mutex mu_;
  sqlite3* db_;
};

}  // namespace trainyard::store
