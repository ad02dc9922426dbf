#include "server/admin_routes.h"

#include "api/route_util.h"
#include "common/json_parse.h"

namespace trainyard::server {
namespace {

using nlohmann::json;

StatusOr<bool> DryRunOf(const httplib::Request& req) {
  if (req.body.empty()) return false;
  TY_ASSIGN_OR_RETURN(json body, ParseJson(req.body));
  if (!body.is_object()) return InvalidArgumentError("the body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key != "dryRun") {
      return InvalidArgumentError("Invalid JSON payload received. Unknown name \"" + key +
                                  "\": Cannot find field.");
    }
    if (!value.is_boolean()) return InvalidArgumentError("dryRun: must be true or false");
  }
  return body.value("dryRun", false);
}

}  // namespace

void RegisterAdminRoutes(api::RouteTable& routes, Retention* retention) {
  // Server-wide: only an admin of every project may run it.
  const api::ProjectOf every_project = [](const httplib::Request&) { return std::string("*"); };
  routes.Post("/v1/admin:gc", auth::Access::kAdmin,
              api::Guarded([retention](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
                TY_ASSIGN_OR_RETURN(bool dry_run, DryRunOf(req));
                TY_ASSIGN_OR_RETURN(GcReport report, retention->Collect(dry_run));
                return report.ToJson();
              }),
              every_project);
}

}  // namespace trainyard::server
