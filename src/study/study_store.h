// StudyStore: the durable home of HyperparameterTuningJobs (one record per study).
//
// A record is the study's name, parent, creation time and one JSON document holding everything
// else (the request, the StudyRunner's SaveState(), each trial's metric-collector state and log
// cursor). Every Insert/Update/Delete is one transaction: after it returns OK the change survives
// a crash of the server process; after an error nothing changed.
//
// Implementations: SqliteStudyStore (the server's, <data-dir>/studies.db) and MemoryStudyStore
// (tests, `trainyard server --store memory`). Thread-safety: all methods may be called
// concurrently.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::study {

struct StudyRecord {
  std::string name;       // projects/P/locations/L/hyperparameterTuningJobs/ID
  std::string parent;     // projects/P/locations/L
  int64_t create_us = 0;  // creation time, microseconds since the epoch (list order)
  nlohmann::json data = nlohmann::json::object();
};

class StudyStore {
 public:
  virtual ~StudyStore() = default;
  // ALREADY_EXISTS if a record with this name exists.
  virtual Status Insert(const StudyRecord& record) = 0;
  // Replaces the record's data. NOT_FOUND if it does not exist.
  virtual Status Update(const StudyRecord& record) = 0;
  virtual StatusOr<StudyRecord> Get(const std::string& name) const = 0;
  // Records under `parent` ("" = all), newest first.
  virtual StatusOr<std::vector<StudyRecord>> List(const std::string& parent) const = 0;
  // NOT_FOUND if it does not exist.
  virtual Status Delete(const std::string& name) = 0;
};

}  // namespace trainyard::study
