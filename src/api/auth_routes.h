// Routes about access itself (route_table.h):
//   GET /v1/routes                                   every route with its access level (admin)
//   GET /v1/projects/{p}/auditLogs?pageSize&pageToken the project's audit log, oldest first
//                                                    (admin); pageToken is the last seq seen
#pragma once

#include "api/route_table.h"

namespace trainyard::api {

// `audit` may be null (then auditLogs answers FAILED_PRECONDITION); it must outlive the server.
void RegisterAuthRoutes(RouteTable& routes, auth::AuditLog* audit);

}  // namespace trainyard::api
