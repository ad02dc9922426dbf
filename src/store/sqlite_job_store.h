// SqliteJobStore: the default JobStore and TuningJobStore, one SQLite database file (WAL mode)
// holding custom jobs and HyperparameterTuningJobs.
//
// Durability: every Create/Mutate/Delete is one transaction. With Sync::kNormal (the default) a
// committed change survives a crash or kill -9 of the server process (WAL frames are in the OS
// page cache before COMMIT returns) but the last transactions may be lost on power failure; with
// Sync::kFull each commit is fsynced. Schema: table `jobs` (name, parent, state, display_name,
// create_us, update_us, json — the job in its proto3-JSON stored form) and `job_labels`
// (name, key, value) for label filters, `tuning_jobs` (the same columns plus `runtime`, the
// TuningJobController's state) whose labels also live in job_labels, and `resources` (every
// resource of the shared resource layer and every long-running operation: resource_store.h);
// PRAGMA user_version is the schema version, upgraded step by step (jobs_db_schema.h). The
// tuning-job methods are in sqlite_tuning_jobs.cc, the ResourceStore in sqlite_resources.cc.
//
// Data dirs written before HyperparameterTuningJobs moved into this database have a separate
// `studies.db`; ImportStudiesDb moves its rows here once (studies_db_import.cc).
//
// Thread-safety: all methods are serialized on one connection by a mutex.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/job_store.h"
#include "store/resource_store.h"
#include "store/tuning_job_store.h"

struct sqlite3;

namespace trainyard::store {

class SqliteJobStore : public JobStore, public TuningJobStore, public ResourceStore {
 public:
  enum class Sync { kNormal, kFull };

  // Opens or creates the database. UNAVAILABLE if the file cannot be opened, DATA_LOSS if it is not
  // a Trainyard database, FAILED_PRECONDITION if it was written by a newer schema version.
  static StatusOr<std::unique_ptr<SqliteJobStore>> Open(const std::filesystem::path& path,
                                                        Sync sync = Sync::kNormal);
  ~SqliteJobStore() override;

  Status Create(const spec::CustomJob& job) override;
  StatusOr<spec::CustomJob> Get(const std::string& name) override;
  StatusOr<spec::CustomJob> FindInProject(const std::string& project,
                                          const std::string& id) override;
  StatusOr<spec::CustomJob> Mutate(const std::string& name,
                                   const std::function<Status(spec::CustomJob&)>& mutate) override;
  Status Delete(const std::string& name) override;
  StatusOr<ListResult> List(const ListQuery& query) override;
  StatusOr<std::vector<spec::CustomJob>> ListUnfinished() override;
  StatusOr<std::vector<ParentCount>> CountJobsByParent() override;
  StatusOr<std::vector<StateCount>> CountJobsByState() override;

  // Inserts many jobs in one transaction (benchmarks and imports). Same checks as Create.
  Status CreateBatch(const std::vector<spec::CustomJob>& jobs);

  Status CreateTuningJob(const TuningJobRecord& record) override;
  Status UpdateTuningJob(const TuningJobRecord& record) override;
  StatusOr<TuningJobRecord> GetTuningJob(const std::string& name) override;
  Status DeleteTuningJob(const std::string& name) override;
  StatusOr<TuningJobListResult> ListTuningJobs(const ListQuery& query) override;
  StatusOr<std::vector<TuningJobRecord>> ListAllTuningJobs() override;
  StatusOr<std::vector<ParentCount>> CountTuningJobsByParent() override;
  StatusOr<std::vector<StateCount>> CountTuningJobsByState() override;

  Status CreateResource(const std::string& kind, const ResourceRecord& record) override;
  StatusOr<ResourceRecord> GetResource(const std::string& kind, const std::string& name) override;
  StatusOr<ResourceRecord> MutateResource(
      const std::string& kind, const std::string& name,
      const std::function<Status(ResourceRecord&)>& mutate) override;
  Status DeleteResource(const std::string& kind, const std::string& name) override;
  Status CreateResourceFamily(const std::string& kind, const ResourceRecord& record,
                              const std::string& child_kind,
                              const std::vector<ResourceRecord>& children) override;
  StatusOr<ResourceFamily> MutateResourceFamily(
      const std::string& kind, const std::string& name, const std::string& child_kind,
      const std::function<Status(ResourceFamily&)>& mutate) override;
  StatusOr<ResourcePage> ListResources(const std::string& kind, const ListQuery& query,
                                       const StateVocabulary& states) override;
  StatusOr<std::vector<ResourceRecord>> ListAllResources(const std::string& kind) override;
  StatusOr<std::vector<ParentCount>> CountResourcesByParent(const std::string& kind) override;
  StatusOr<std::vector<StateCount>> CountResourcesByState(const std::string& kind) override;

  // The one migration path of HP-tuning data: when `studies_db` (a data dir's studies.db from
  // before HyperparameterTuningJobs lived here) exists, copies all its studies into tuning_jobs in
  // one transaction, then renames it to studies.db.imported (with its -wal/-shm). Imported jobs
  // carry their request, labels and times; their state, trials and error are recomputed from
  // `runtime` by TuningJobController::Start, which rewrites every record. Rows already present
  // (an import interrupted after its commit) are skipped, so a repeated import is harmless.
  // OK and nothing done when the file does not exist; DATA_LOSS when it is not a studies database;
  // on error nothing was imported and the file is left in place.
  Status ImportStudiesDb(const std::filesystem::path& studies_db);

 private:
  explicit SqliteJobStore(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql);
  Status InsertLocked(const spec::CustomJob& job);
  Status WriteLabelsLocked(const std::string& name,
                           const std::map<std::string, std::string>& labels);
  Status InsertTuningJobLocked(const TuningJobRecord& record, bool if_absent);
  StatusOr<spec::CustomJob> GetLocked(const std::string& name);
  StatusOr<ResourceRecord> GetResourceLocked(const std::string& kind, const std::string& name);
  // One row of `resources` (and its labels); the caller holds mu_ inside a transaction.
  Status InsertResourceLocked(const std::string& kind, const ResourceRecord& record);
  Status ReplaceResourceLocked(const std::string& kind, const ResourceRecord& record,
                               bool labels_changed);
  Status DeleteResourceLocked(const std::string& kind, const std::string& name);

  std::mutex mu_;
  sqlite3* db_;
};

}  // namespace trainyard::store
