// MemoryJobStore: a JobStore held in memory, for tests and for `trainyard server --store memory`.
// Nothing survives the process. Thread-safe (one mutex).
#pragma once

#include <map>
#include <mutex>

#include "store/job_store.h"

namespace trainyard::store {

class MemoryJobStore : public JobStore {
 public:
  Status Create(const spec::CustomJob& job) override;
  StatusOr<spec::CustomJob> Get(const std::string& name) override;
  StatusOr<spec::CustomJob> Mutate(const std::string& name,
                                   const std::function<Status(spec::CustomJob&)>& mutate) override;
  Status Delete(const std::string& name) override;
  StatusOr<ListResult> List(const ListQuery& query) override;
  StatusOr<std::vector<spec::CustomJob>> ListUnfinished() override;

 private:
  std::mutex mu_;
  std::map<std::string, spec::CustomJob> jobs_;
};

}  // namespace trainyard::store
