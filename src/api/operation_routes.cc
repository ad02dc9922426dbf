#include "api/operation_routes.h"

#include <httplib.h>

#include "api/route_util.h"
#include "common/time.h"
#include "controller/operation_controller.h"
#include "protojson/parse.h"
#include "protojson/reader.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

// The operation's prefix (without the version segment): projects/P/locations/L[/C/ID].
constexpr const char* kPrefix =
    "/(?:v1|ui)/(projects/([^/]+)/locations/[^/]+(?:/[A-Za-z]+/[^/:]+)?)/operations";
constexpr std::chrono::seconds kMaxWait{60};

std::string Name(const httplib::Request& req) {
  return std::string(req.matches[1]) + "/operations/" + std::string(req.matches[3]);
}

StatusOr<std::chrono::milliseconds> WaitTimeout(const httplib::Request& req) {
  if (req.body.empty()) return std::chrono::milliseconds(kMaxWait);
  TY_ASSIGN_OR_RETURN(json body, protojson::ParseJson(req.body));
  if (!body.is_object()) return InvalidArgumentError("Invalid JSON payload received: expected {}");
  for (const auto& [key, value] : body.items()) {
    if (key != "timeout") return protojson::UnknownFieldError("", key);
  }
  if (!body.contains("timeout")) return std::chrono::milliseconds(kMaxWait);
  TY_ASSIGN_OR_RETURN(Duration d, protojson::ReadDuration(body["timeout"], "timeout"));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d);
  if (ms.count() < 0) return InvalidFieldError("timeout", "must not be negative");
  return std::min(ms, std::chrono::milliseconds(kMaxWait));
}

}  // namespace

void RegisterOperationRoutes(RouteTable& routes, controller::OperationController* ops) {
  using auth::Access;
  const std::string list = kPrefix;
  const std::string item = list + "/([^/:]+)";
  routes.Get(list, Access::kRead, Guarded([ops](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {"filter", "pageSize", "pageToken"}));
               store::ListQuery q;
               q.parent = req.matches[1];
               q.filter = req.get_param_value("filter");
               TY_ASSIGN_OR_RETURN(int64_t size, IntParam(req, "pageSize", 0, 0, 1 << 30));
               q.page_size = static_cast<int>(size);
               q.page_token = req.get_param_value("pageToken");
               return ops->List(q);
             }));
  routes.Get(item, Access::kRead, Guarded([ops](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               return ops->Get(Name(req));
             }));
  routes.Post(item + ":wait", Access::kRead,
              Guarded([ops](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {"timeout"}));
                TY_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, WaitTimeout(req));
                return ops->Wait(Name(req), timeout);
              }));
  routes.Post(item + ":cancel", Access::kWrite,
              Guarded([ops](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {}));
                TY_RETURN_IF_ERROR(CheckEmptyBody(req));
                TY_RETURN_IF_ERROR(ops->Cancel(Name(req)));
                return json::object();
              }));
  routes.Delete(item, Access::kWrite, Guarded([ops](const httplib::Request& req) -> StatusOr<json> {
                  TY_RETURN_IF_ERROR(CheckParams(req, {}));
                  TY_RETURN_IF_ERROR(ops->Delete(Name(req)));
                  return json::object();
                }));
}

}  // namespace trainyard::api
