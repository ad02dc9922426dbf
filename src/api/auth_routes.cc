#include "api/auth_routes.h"

#include "api/route_util.h"

namespace trainyard::api {

using nlohmann::json;

void RegisterAuthRoutes(RouteTable& routes, auth::AuditLog* audit) {
  routes.Get("/v1/routes", auth::Access::kAdmin,
             Guarded([&routes](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               json out = json::array();
               for (const RouteSpec& r : routes.routes()) {
                 out.push_back({{"method", r.method},
                                {"pattern", r.pattern},
                                {"access", std::string(auth::AccessName(r.access))}});
               }
               return json{{"routes", out}, {"authentication", routes.auth_enabled()}};
             }));

  routes.Get("/v1/projects/([^/]+)/auditLogs", auth::Access::kAdmin,
             Guarded([audit](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {"pageSize", "pageToken"}));
               if (audit == nullptr) {
                 return FailedPreconditionError(
                     "this server keeps no audit log (it runs with --store memory)");
               }
               TY_ASSIGN_OR_RETURN(int64_t size, IntParam(req, "pageSize", 100, 1, 1000));
               TY_ASSIGN_OR_RETURN(int64_t after, IntParam(req, "pageToken", 0, 0, INT64_MAX));
               auth::AuditQuery q{std::string(req.matches[1]), after, static_cast<int>(size)};
               TY_ASSIGN_OR_RETURN(std::vector<auth::AuditEntry> entries, audit->Query(q));
               json out = json::object();
               out["entries"] = json::array();
               for (const auto& e : entries) out["entries"].push_back(auth::AuditEntryToJson(e));
               if (static_cast<int64_t>(entries.size()) == size) {
                 out["nextPageToken"] = std::to_string(entries.back().seq);
               }
               return out;
             }));
}

}  // namespace trainyard::api
