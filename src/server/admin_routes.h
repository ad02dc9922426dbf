// Routes of the server's own administration, outside any project, for admin tokens of every
// project ("*") only:
//   POST /v1/admin:gc   {"dryRun": bool}  one retention pass now (retention.h); answers its
//                                         GcReport JSON
// `trainyard admin gc` calls it.
#pragma once

#include "api/route_table.h"
#include "server/retention.h"

namespace trainyard::server {

// `retention` must outlive the routes.
void RegisterAdminRoutes(api::RouteTable& routes, Retention* retention);

}  // namespace trainyard::server
