// The training-curves route, a Trainyard extension of the JobService REST API (docs/api.md):
//
//   GET /v1/projects/{p}/locations/{l}/customJobs/{id}:scalars[?after=CURSOR]
//
// reads the scalars of the job's TensorBoard event files (src/tensorboard) and returns
//
//   {"logDir": "gs://bkt/out/logs/", "series": [{"run": ".", "tag": "train/loss",
//     "points": [[step, wallTime, value], ...]}], "nextCursor": "...", "more": false,
//    "jobState": "JOB_STATE_RUNNING", "warnings": []}
//
// With `after` (a previous nextCursor) only points written since are returned, so a client polls
// it while the job runs. The log dir is the one the job's replicas get (TensorBoardLogDir).
#pragma once

#include <optional>
#include <string>

#include "api/route_table.h"
#include "controller/job_controller.h"
#include "spec/custom_job.h"

namespace httplib {
class Server;
}

namespace trainyard::observability {

// The TensorBoard log dir of `job` as its code sees it: AIP_TENSORBOARD_LOG_DIR
// (baseOutputDirectory + "logs/", as src/executor/replica_env.cc sets it), else the first pool's
// explicit AIP_TENSORBOARD_LOG_DIR env or --tensorboard-dir argument (trainyard-bert's flag);
// nullopt when the job has none.
std::optional<std::string> TensorBoardLogDir(const spec::CustomJob& job);

// `controller` must outlive the server.
void RegisterScalarsRoute(api::RouteTable& routes, controller::JobController* controller);

}  // namespace trainyard::observability
