// The REST routes of the JobService subset Trainyard serves (docs/api.md):
//   POST   /v1/projects/{p}/locations/{l}/customJobs              CreateCustomJob
//   GET    /v1/projects/{p}/locations/{l}/customJobs              ListCustomJobs
//   GET    /v1/projects/{p}/locations/{l}/customJobs/{id}         GetCustomJob
//   DELETE /v1/projects/{p}/locations/{l}/customJobs/{id}         DeleteCustomJob (an Operation)
//   POST   /v1/projects/{p}/locations/{l}/customJobs/{id}:cancel  CancelCustomJob
//   GET    /v1/projects/{p}/locations/{l}/customJobs/{id}:logs    Trainyard: read/stream logs
//   GET    /healthz                                                (public)
//   GET    /v1/routes                       Trainyard: every route and its access (admin)
//   GET    /v1/projects/{p}/auditLogs       Trainyard: the audit log of a project (admin)
#pragma once

#include "api/api_server.h"

namespace trainyard::api {

void RegisterRoutes(RouteTable& routes, controller::JobController* controller,
                    const ApiServerOptions& options);

}  // namespace trainyard::api
