// ResourceDirectory: where resources are. For the projects a caller may see, the locations that
// hold custom jobs, HP-tuning jobs, training pipelines or models, with how many of each: what the
// console's project/location picker shows (GET /v1/projects, api/directory_routes.h), so that a
// job submitted with `--region=europe-west4` under a real project id is found without guessing.
//
// Read-only: it counts rows of the stores (one GROUP BY per collection) and changes nothing.
// Resources whose parent has no location (AI Platform's projects/P/jobs) are counted through the
// custom jobs that back them.
//
// Thread-safety: as the stores (all methods may be called concurrently).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/job_store.h"
#include "store/resource_store.h"
#include "store/tuning_job_store.h"

namespace trainyard::controller {

struct LocationSummary {
  std::string location;                   // "us-central1"
  std::map<std::string, int64_t> counts;  // collection ("customJobs", "models", ...) -> number
};

struct ProjectSummary {
  std::string project;                     // "local"
  std::vector<LocationSummary> locations;  // ordered by location; may be empty
};

class ResourceDirectory {
 public:
  // The stores must outlive the directory.
  ResourceDirectory(store::JobStore* jobs, store::TuningJobStore* tuning_jobs,
                    store::ResourceStore* resources);

  // `project` "*": every project that holds a resource; a project id: that project alone, also
  // when it holds nothing (a caller whose token is for one project sees where to start).
  // Projects and locations are ordered by id. Only store errors fail it.
  StatusOr<std::vector<ProjectSummary>> Projects(const std::string& project) const;

  // The collections counted, in the order the console lists them.
  static const std::vector<std::string>& Collections();

 private:
  store::JobStore* jobs_;
  store::TuningJobStore* tuning_jobs_;
  store::ResourceStore* resources_;
};

}  // namespace trainyard::controller
