// Routes of the server's own administration, outside any project, for admin tokens of every
// project ("*") only:
//   POST /v1/admin:gc      {"dryRun": bool}  one retention pass now (retention.h); answers its
//                                            GcReport JSON
//   POST /v1/admin:drain   {}                stop starting new jobs: creates are stored QUEUED and
//                                            held (JobController::SetDraining); survives a restart
//   POST /v1/admin:resume  {}                start the held jobs and new ones again
//   GET  /v1/admin:status                    {"draining", "heldJobs", "version"}
// `trainyard admin gc|drain|resume|status` call them.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

#include "api/route_table.h"
#include "server/retention.h"

namespace trainyard::server {

// What the routes act on; every member must outlive the routes.
struct AdminControls {
  Retention* retention = nullptr;
  // Turns draining on or off (persisting it) and answers the status after it.
  std::function<StatusOr<nlohmann::json>(bool draining)> set_draining;
  std::function<nlohmann::json()> status;
};

void RegisterAdminRoutes(api::RouteTable& routes, AdminControls controls);

}  // namespace trainyard::server
