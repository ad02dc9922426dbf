// Every resource the server stores, counted by kind and state for /metrics
// (trainyard_resources{kind,state}): one GROUP BY query per kind, no resource is read.
//
//   kind                       state names
//   customJobs                 JobState (JOB_STATE_RUNNING, ...; trials included)
//   hyperparameterTuningJobs   JobState
//   trainingPipelines          PipelineState (PIPELINE_STATE_RUNNING, ...)
//   jobs                       AI Platform Training's JobState (RUNNING, ...; projects/P/jobs)
//   models, modelVersions      none: the state is ""
//   operations                 RUNNING or DONE
//
// Every resource ever created and not yet deleted is counted, finished ones included (retention
// removes done operations; jobs stay until deleted).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/job_store.h"
#include "store/resource_store.h"
#include "store/tuning_job_store.h"

namespace trainyard::observability {

struct ResourceCount {
  std::string kind;   // the collection, as in the table above
  std::string state;  // the state's enum name; "" for kinds without a state
  int64_t count = 0;
};

// The counts of the kinds whose store is given (null: those kinds are left out), in the order of
// the table above, states ordered by number. The first store error fails the whole count.
StatusOr<std::vector<ResourceCount>> CountResources(store::JobStore* jobs,
                                                    store::TuningJobStore* tuning_jobs,
                                                    store::ResourceStore* resources);

}  // namespace trainyard::observability
