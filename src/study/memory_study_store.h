// MemoryStudyStore: a StudyStore in a map, for tests and `--store memory` (nothing survives the
// process).
#pragma once

#include <map>
#include <mutex>

#include "study/study_store.h"

namespace trainyard::study {

class MemoryStudyStore : public StudyStore {
 public:
  Status Insert(const StudyRecord& record) override;
  Status Update(const StudyRecord& record) override;
  StatusOr<StudyRecord> Get(const std::string& name) const override;
  StatusOr<std::vector<StudyRecord>> List(const std::string& parent) const override;
  Status Delete(const std::string& name) override;

 private:
  mutable std::mutex mu_;
  std::map<std::string, StudyRecord> records_;
};

}  // namespace trainyard::study
