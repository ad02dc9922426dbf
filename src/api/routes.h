// The REST routes of the JobService subset Trainyard serves (docs/api.md, docs/hp-tuning.md).
// RegisterRoutes is the one place where routes are added to the HTTP server; each resource's
// handlers decode with its spec/ codec, call its controller and answer errors through
// route_util.h (google.rpc.Status bodies from the one Status -> HTTP mapping, http_status.h).
// customJobs (routes.cc):
//   POST   /v1/projects/{p}/locations/{l}/customJobs              CreateCustomJob
//   GET    /v1/projects/{p}/locations/{l}/customJobs              ListCustomJobs
//   GET    /v1/projects/{p}/locations/{l}/customJobs/{id}         GetCustomJob
//   DELETE /v1/projects/{p}/locations/{l}/customJobs/{id}         DeleteCustomJob (an Operation)
//   POST   /v1/projects/{p}/locations/{l}/customJobs/{id}:cancel  CancelCustomJob
//   GET    /v1/projects/{p}/locations/{l}/customJobs/{id}:logs    Trainyard: read/stream logs
// hyperparameterTuningJobs (tuning_job_routes.cc):
//   POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              Create
//   GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              List (filter,
//          pageSize, pageToken: the customJobs syntax and tokens)
//   GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         Get
//   DELETE /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         Delete (an
//   Operation) POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}:cancel  Cancel
//   GET    /healthz                                                (public)
//   GET    /v1/routes                       Trainyard: every route and its access (admin)
//   GET    /v1/projects/{p}/auditLogs       Trainyard: the audit log of a project (admin)
#pragma once

#include "api/api_server.h"

namespace trainyard::api {

// Registers every route above. The controllers must outlive the server.
void RegisterRoutes(RouteTable& routes, const ApiControllers& controllers,
                    const ApiServerOptions& options);

// The two resource families; RegisterRoutes calls both.
void RegisterCustomJobRoutes(RouteTable& routes, controller::JobController* controller,
                             const ApiServerOptions& options);
void RegisterTuningJobRoutes(RouteTable& routes, controller::TuningJobController* tuning);

}  // namespace trainyard::api
