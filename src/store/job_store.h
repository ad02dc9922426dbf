// JobStore: durable home of CustomJob resources (STYLE.md §2: small interface, several
// implementations, one conformance suite in job_store_conformance.h).
//
// Contract for every implementation:
// - A job is keyed by its full resource name "projects/P/locations/L/customJobs/ID"; its parent is
//   "projects/P/locations/L". create_time must be set by the caller before Create.
// - Each successful Create/Update/Mutate/Delete is one atomic, durable state change: after it
//   returns OK the change survives a crash of the process (SqliteJobStore: one transaction).
// - List returns jobs of one parent newest first (create_time desc, then name desc), in pages, with
//   an optional AIP-160 filter (list_filter.h). Page tokens are opaque, bound to the parent and
//   filter they were issued for, and stay valid while jobs are added or deleted.
// - All methods are thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/custom_job.h"

namespace trainyard::store {

inline constexpr int kDefaultPageSize = 100;
inline constexpr int kMaxPageSize = 1000;

struct ListQuery {
  std::string parent;      // "projects/P/locations/L"
  std::string filter;      // "" = all; e.g. state="JOB_STATE_RUNNING" AND labels.team=nlp
  int page_size = 0;       // 0 = kDefaultPageSize; larger than kMaxPageSize is capped
  std::string page_token;  // "" = first page
};

struct ListResult {
  std::vector<spec::CustomJob> jobs;
  std::string next_page_token;  // "" on the last page
};

// How many resources of one collection a parent holds (the console's "where the jobs are").
struct ParentCount {
  std::string parent;  // "projects/P/locations/L" (or "projects/P" for resources without one)
  int64_t count = 0;   // > 0
};

// How many resources of one collection are in one state (what /metrics counts).
struct StateCount {
  int64_t state = 0;  // the number of the resource's state enum (0: none or unspecified)
  int64_t count = 0;  // > 0
};

// Splits "projects/P/locations/L/customJobs/ID" into parent and id. INVALID_ARGUMENT otherwise.
Status SplitJobName(const std::string& name, std::string* parent, std::string* id);

class JobStore {
 public:
  virtual ~JobStore() = default;

  // ALREADY_EXISTS if a job with this name exists; INVALID_ARGUMENT for a malformed name or a
  // missing create_time.
  virtual Status Create(const spec::CustomJob& job) = 0;

  // NOT_FOUND if absent.
  virtual StatusOr<spec::CustomJob> Get(const std::string& name) = 0;

  // Reads the job, applies `mutate` and writes the result, atomically with respect to every other
  // call on this store. If `mutate` returns an error nothing is written and that error is
  // returned. `mutate` must not change the name. Returns the job as written. NOT_FOUND if absent.
  virtual StatusOr<spec::CustomJob> Mutate(
      const std::string& name, const std::function<Status(spec::CustomJob&)>& mutate) = 0;

  // The job named projects/{project}/locations/{any}/customJobs/{id}: how a caller that knows
  // only a job id (Cloud Logging's resource.labels.job_id) checks that the job is the project's.
  // NOT_FOUND if the project has no such job (in any location).
  virtual StatusOr<spec::CustomJob> FindInProject(const std::string& project,
                                                  const std::string& id) = 0;

  // NOT_FOUND if absent.
  virtual Status Delete(const std::string& name) = 0;

  // INVALID_ARGUMENT for a malformed filter (naming the position and the fix) or a page token that
  // was not issued for this parent and filter.
  virtual StatusOr<ListResult> List(const ListQuery& query) = 0;

  // Every job not in a terminal state, oldest first, across all parents (for server restart).
  virtual StatusOr<std::vector<spec::CustomJob>> ListUnfinished() = 0;

  // Every parent that holds at least one job, with its number of jobs, ordered by parent.
  virtual StatusOr<std::vector<ParentCount>> CountJobsByParent() = 0;

  // Every state at least one job (finished ones included) is in, with its number of jobs, ordered
  // by state.
  virtual StatusOr<std::vector<StateCount>> CountJobsByState() = 0;
};

}  // namespace trainyard::store
