#include "study/memory_study_store.h"

#include <algorithm>

namespace trainyard::study {

Status MemoryStudyStore::Insert(const StudyRecord& record) {
  std::lock_guard lock(mu_);
  if (!records_.emplace(record.name, record).second) {
    return AlreadyExistsError("hyperparameterTuningJob " + record.name + " already exists");
  }
  return Status::Ok();
}

Status MemoryStudyStore::Update(const StudyRecord& record) {
  std::lock_guard lock(mu_);
  auto it = records_.find(record.name);
  if (it == records_.end())
    return NotFoundError("hyperparameterTuningJob " + record.name + " not found");
  it->second = record;
  return Status::Ok();
}

StatusOr<StudyRecord> MemoryStudyStore::Get(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = records_.find(name);
  if (it == records_.end()) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  return it->second;
}

StatusOr<std::vector<StudyRecord>> MemoryStudyStore::List(const std::string& parent) const {
  std::lock_guard lock(mu_);
  std::vector<StudyRecord> out;
  for (const auto& [name, r] : records_) {
    if (parent.empty() || r.parent == parent) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const StudyRecord& a, const StudyRecord& b) {
    return a.create_us != b.create_us ? a.create_us > b.create_us : a.name > b.name;
  });
  return out;
}

Status MemoryStudyStore::Delete(const std::string& name) {
  std::lock_guard lock(mu_);
  if (records_.erase(name) == 0)
    return NotFoundError("hyperparameterTuningJob " + name + " not found");
  return Status::Ok();
}

}  // namespace trainyard::study
