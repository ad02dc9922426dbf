// MemoryJobStore: a JobStore, TuningJobStore and ResourceStore held in memory, for tests and for
// `trainyard server --store memory`. Nothing survives the process. Thread-safe (one mutex).
#pragma once

#include <map>
#include <mutex>

#include "store/job_store.h"
#include "store/resource_store.h"
#include "store/tuning_job_store.h"

namespace trainyard::store {

class MemoryJobStore : public JobStore, public TuningJobStore, public ResourceStore {
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
  StatusOr<std::vector<ParentCount>> CountJobsByParent() override;
  StatusOr<std::vector<StateCount>> CountJobsByState() override;

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

 private:
  struct KindAndRecord {
    std::string kind;
    ResourceRecord record;
  };

  std::mutex mu_;
  std::map<std::string, spec::CustomJob> jobs_;
  std::map<std::string, TuningJobRecord> tuning_jobs_;
  std::map<std::string, KindAndRecord> resources_;
};

}  // namespace trainyard::store
