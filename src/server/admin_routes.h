// Routes of the server's own administration, outside any project, for admin tokens of every
// project ("*") only, but a project's pause (admins of that project too):
//   POST /v1/admin:gc      {"dryRun": bool}  one retention pass now (retention.h); answers its
//                                            GcReport JSON
//   POST /v1/admin:drain   {}                stop starting new jobs: creates are stored QUEUED and
//                                            held (JobController::SetDraining); survives a restart
//   POST /v1/admin:resume  {}                start the held jobs and new ones again
//   GET  /v1/admin:status                    {"draining", "heldJobs", "pausedProjects":
//                                            [{"project", "since", "heldJobs"}], "version"}
//   POST /v1/admin/projects/P:drain  {}      the same pause for project P only (its new and held
//                                            jobs stay QUEUED; controller/pause_book.h); for an
//                                            admin of P or of every project; answers
//                                            {"project", "paused", "since", "heldJobs"}
//   POST /v1/admin/projects/P:resume {}      ends P's pause; the answer adds "startedJobs"
//   POST /v1/admin/projects/P:setQuota  ProjectQuota  sets project P's quota and fair-share weight
//                                            (controller/project_quota.h: {"vcpus", "memoryGib",
//                                            "gpus": {type: n}, "concurrentJobs", "weight"});
//                                            answers P's entry (below) with "startedJobs"
//   POST /v1/admin/projects/P:clearQuota {}  removes it (no limits, weight 1)
//   GET  /v1/admin/quotas                    {"projects": [{"project", "quota", "used",
//                                            "heldJobs"}]}: every project with a quota or jobs
// `trainyard admin gc|drain|resume|status|quota` call them (drain and resume with --project P: the
// project's routes).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "api/route_table.h"
#include "controller/project_quota.h"
#include "server/retention.h"

namespace trainyard::server {

// What the routes act on; every member must outlive the routes.
struct AdminControls {
  Retention* retention = nullptr;
  // Pauses or resumes `scope`, persisting it: controller::kServerScope (drain, resume; answers
  // the status after it) or a project (answers its entry).
  std::function<StatusOr<nlohmann::json>(const std::string& scope, bool paused)> set_paused;
  std::function<nlohmann::json()> status;
  // Sets (nullopt: removes) a project's quota, persisting it, and answers its entry.
  std::function<StatusOr<nlohmann::json>(const std::string& project,
                                         std::optional<controller::ProjectQuota> quota)>
      set_quota;
  std::function<nlohmann::json()> quotas;
};

void RegisterAdminRoutes(api::RouteTable& routes, AdminControls controls);

}  // namespace trainyard::server
