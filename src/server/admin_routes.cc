#include "server/admin_routes.h"

#include <algorithm>

#include "api/route_util.h"
#include "controller/pause_book.h"
#include "protojson/parse.h"
#include "protojson/reader.h"

namespace trainyard::server {
namespace {

using nlohmann::json;

// The body of POST /v1/admin:gc: empty, or {"dryRun": bool}; protojson's rules and wording.
StatusOr<bool> DryRunOf(const httplib::Request& req) {
  if (req.body.empty()) return false;
  TY_ASSIGN_OR_RETURN(json body, protojson::ParseJson(req.body));
  if (!body.is_object()) return protojson::InvalidValueError("", "GcRequest", body, "an object");
  bool dry_run = false;
  for (const auto& [key, value] : body.items()) {
    if (key != "dryRun" && key != "dry_run") return protojson::UnknownFieldError("", key);
    if (value.is_null()) continue;  // proto3 JSON: null = not set
    TY_ASSIGN_OR_RETURN(dry_run, protojson::ReadBool(value, "dryRun"));
  }
  return dry_run;
}

// A body that is empty or {}: the drain and resume calls take no fields.
Status CheckEmptyBody(const httplib::Request& req) {
  if (req.body.empty()) return Status::Ok();
  TY_ASSIGN_OR_RETURN(json body, protojson::ParseJson(req.body));
  if (!body.is_object()) return protojson::InvalidValueError("", "Empty", body, "an object");
  if (!body.empty()) return protojson::UnknownFieldError("", body.begin().key());
  return Status::Ok();
}

// The P of /v1/admin/projects/P:...: a project id ("*" and other patterns are not projects).
StatusOr<std::string> ProjectOfAdminPath(const httplib::Request& req) {
  const std::string project = req.matches.size() > 1 ? req.matches[1].str() : "";
  const bool valid =
      !project.empty() && project.size() <= 63 &&
      std::all_of(project.begin(), project.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
      });
  if (!valid) {
    return InvalidFieldError("project",
                             "must be a project id (lowercase letters, digits, '-', "
                             "'_', '.'), got '" +
                                 project + "'");
  }
  return project;
}

// drain and resume: of the server (/v1/admin:drain, an admin of every project) or of one project
// (/v1/admin/projects/P:drain, an admin of P may call it: the access check reads P from the path).
void RegisterPauseRoutes(api::RouteTable& routes, const AdminControls& controls,
                         const api::ProjectOf& every_project) {
  const api::ProjectOf path_project = [](const httplib::Request& req) {
    return req.matches.size() > 1 ? req.matches[1].str() : std::string();
  };
  for (const bool pause : {true, false}) {
    const std::string verb = pause ? "drain" : "resume";
    routes.Post("/v1/admin:" + verb, auth::Access::kAdmin,
                api::Guarded([set = controls.set_paused,
                              pause](const httplib::Request& req) -> StatusOr<json> {
                  TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
                  TY_RETURN_IF_ERROR(CheckEmptyBody(req));
                  return set(controller::kServerScope, pause);
                }),
                every_project);
    routes.Post("/v1/admin/projects/([^/:]+):" + verb, auth::Access::kAdmin,
                api::Guarded([set = controls.set_paused,
                              pause](const httplib::Request& req) -> StatusOr<json> {
                  TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
                  TY_RETURN_IF_ERROR(CheckEmptyBody(req));
                  TY_ASSIGN_OR_RETURN(std::string project, ProjectOfAdminPath(req));
                  return set(project, pause);
                }),
                path_project);
  }
}

void RegisterQuotaRoutes(api::RouteTable& routes, const AdminControls& controls,
                         const api::ProjectOf& every_project) {
  routes.Post(
      "/v1/admin/projects/([^/:]+):setQuota", auth::Access::kAdmin,
      api::Guarded([set = controls.set_quota](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
        TY_ASSIGN_OR_RETURN(std::string project, ProjectOfAdminPath(req));
        TY_ASSIGN_OR_RETURN(json body, protojson::ParseJson(req.body.empty() ? "{}" : req.body));
        TY_ASSIGN_OR_RETURN(controller::ProjectQuota quota, controller::ProjectQuotaFromJson(body));
        return set(project, quota);
      }),
      every_project);
  routes.Post(
      "/v1/admin/projects/([^/:]+):clearQuota", auth::Access::kAdmin,
      api::Guarded([set = controls.set_quota](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
        TY_RETURN_IF_ERROR(CheckEmptyBody(req));
        TY_ASSIGN_OR_RETURN(std::string project, ProjectOfAdminPath(req));
        return set(project, std::nullopt);
      }),
      every_project);
  routes.Get("/v1/admin/quotas", auth::Access::kAdmin,
             api::Guarded([list = controls.quotas](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
               return list();
             }),
             every_project);
}

}  // namespace

void RegisterAdminRoutes(api::RouteTable& routes, AdminControls controls) {
  // Server-wide: only an admin of every project may call them.
  const api::ProjectOf every_project = [](const httplib::Request&) { return std::string("*"); };
  routes.Post(
      "/v1/admin:gc", auth::Access::kAdmin,
      api::Guarded([retention = controls.retention](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
        TY_ASSIGN_OR_RETURN(bool dry_run, DryRunOf(req));
        TY_ASSIGN_OR_RETURN(GcReport report, retention->Collect(dry_run));
        return report.ToJson();
      }),
      every_project);
  RegisterPauseRoutes(routes, controls, every_project);
  routes.Get(
      "/v1/admin:status", auth::Access::kAdmin,
      api::Guarded([status = controls.status](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
        return status();
      }),
      every_project);
  if (controls.set_quota) RegisterQuotaRoutes(routes, controls, every_project);
}

}  // namespace trainyard::server
