// MemoryJobStore: a JobStore and TuningJobStore held in memory, for tests and for
// `trainyard server --store memory`. Nothing survives the process. Thread-safe (one mutex).
#pragma once

#include <map>
#include <mutex>

#include "store/job_store.h"
#include "store/tuning_job_store.h"

namespace trainyard::store {

class MemoryJobStore : public JobStore, public TuningJobStore {
 public:
  Status Create(const spec::CustomJob& job) override;
  StatusOr<spec::CustomJob> Get(const std::string& name) override;
  StatusOr<spec::CustomJob> FindInProject(const std::string& project,
                                          const std::string& id) override;
  StatusOr<spec::CustomJob> Mutate(const std::string& name,
                                   const std::function<Status(spec::CustomJob&)>& mutate) override;
  Status Delete(const std::string& name) override;
  StatusOr<ListResult> List(const ListQuery& query) override;
  StatusOr<std::vector<spec::CustomJob>> ListUnfinished() override;

  Status CreateTuningJob(const TuningJobRecord& record) override;
  Status UpdateTuningJob(const TuningJobRecord& record) override;
  StatusOr<TuningJobRecord> GetTuningJob(const std::string& name) override;
  Status DeleteTuningJob(const std::string& name) override;
  StatusOr<TuningJobListResult> ListTuningJobs(const ListQuery& query) override;
  StatusOr<std::vector<TuningJobRecord>> ListAllTuningJobs() override;

 private:
  std::mutex mu_;
  std::map<std::string, spec::CustomJob> jobs_;
  std::map<std::string, TuningJobRecord> tuning_jobs_;
};

}  // namespace trainyard::store
