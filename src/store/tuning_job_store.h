// TuningJobStore: durable home of HyperparameterTuningJob resources, with the contract of
// JobStore (job_store.h) for the same things:
// - A job is keyed by "projects/P/locations/L/hyperparameterTuningJobs/ID"; create_time must be
//   set before CreateTuningJob.
// - Each successful Create/Update/Delete is one atomic, durable change (SqliteJobStore: one
//   transaction in the same database as the custom jobs).
// - ListTuningJobs takes the ListQuery of custom jobs: newest first, the same AIP-160 filter
//   (list_filter.h: state, display_name, create_time, update_time, labels.KEY) and the same
//   opaque keyset page tokens (page_token.h).
// - All methods are thread-safe.
//
// Besides the resource, a record holds `runtime`: the TuningJobController's own state (the
// StudyRunner's SaveState, each trial's metric-collector state and log cursor). The store keeps
// it opaque and writes it in the same transaction as the resource, so the two never disagree.
//
// Implementations: SqliteJobStore and MemoryJobStore implement both JobStore and TuningJobStore
// (one object, one database); the conformance suite is tuning_job_store_conformance.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/hyperparameter_tuning_job.h"
#include "store/job_store.h"

namespace trainyard::store {

struct TuningJobRecord {
  spec::HyperparameterTuningJob job;
  nlohmann::json runtime = nlohmann::json::object();
};

struct TuningJobListResult {
  std::vector<spec::HyperparameterTuningJob> jobs;
  std::string next_page_token;  // "" on the last page
};

class TuningJobStore {
 public:
  virtual ~TuningJobStore() = default;

  // ALREADY_EXISTS if a job with this name exists; INVALID_ARGUMENT for a malformed name or a
  // missing create_time.
  virtual Status CreateTuningJob(const TuningJobRecord& record) = 0;
  // Replaces the stored job and runtime. NOT_FOUND if absent.
  virtual Status UpdateTuningJob(const TuningJobRecord& record) = 0;
  // NOT_FOUND if absent.
  virtual StatusOr<TuningJobRecord> GetTuningJob(const std::string& name) = 0;
  // NOT_FOUND if absent.
  virtual Status DeleteTuningJob(const std::string& name) = 0;
  // INVALID_ARGUMENT for a malformed filter or a page token not issued for this parent and filter.
  virtual StatusOr<TuningJobListResult> ListTuningJobs(const ListQuery& query) = 0;
  // Every record of every parent, oldest first (server start).
  virtual StatusOr<std::vector<TuningJobRecord>> ListAllTuningJobs() = 0;
  // Every parent that holds at least one tuning job, with its number of them, ordered by parent.
  virtual StatusOr<std::vector<ParentCount>> CountTuningJobsByParent() = 0;
  // Every state at least one tuning job is in, with its number of them, ordered by state.
  virtual StatusOr<std::vector<StateCount>> CountTuningJobsByState() = 0;
};

}  // namespace trainyard::store
