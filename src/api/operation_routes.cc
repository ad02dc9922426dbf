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

constexpr std::chrono::seconds kMaxWait{60};

// The two shapes of an operation's parent, as route patterns with only `([^/]+)`-style captures
// (so tools that sample every route, security_e2e_test among them, can fill them in): a location,
// or a resource in a location. `PrefixOf` rebuilds the parent from a match.
struct Shape {
  const char* pattern;  // after the version segment
  int captures;         // of the parent
};
constexpr Shape kShapes[] = {
    {"/projects/([^/]+)/locations/([^/]+)", 2},
    {"/projects/([^/]+)/locations/([^/]+)/([^/]+)/([^/:]+)", 4},
};

std::string PrefixOf(const httplib::Request& req, const Shape& shape) {
  std::string p =
      "projects/" + std::string(req.matches[1]) + "/locations/" + std::string(req.matches[2]);
  if (shape.captures == 4)
    p += "/" + std::string(req.matches[3]) + "/" + std::string(req.matches[4]);
  return p;
}

std::string Name(const httplib::Request& req, const Shape& shape) {
  return PrefixOf(req, shape) + "/operations/" + std::string(req.matches[shape.captures + 1]);
}

// The wait's timeout: the body's {"timeout": "5s"} or the query's ?timeout=5s (a REST client may
// bind the request field either way); both, or a value that is not a Duration, is 400.
StatusOr<std::chrono::milliseconds> WaitTimeout(const httplib::Request& req) {
  json body = json::object();
  if (!req.body.empty()) {
    TY_ASSIGN_OR_RETURN(body, protojson::ParseJson(req.body));
    if (!body.is_object()) {
      return InvalidArgumentError("Invalid JSON payload received: expected {}");
    }
  }
  for (const auto& [key, value] : body.items()) {
    if (key != "timeout") return protojson::UnknownFieldError("", key);
  }
  if (req.has_param("timeout")) {
    if (body.contains("timeout")) {
      return InvalidFieldError("timeout", "given both in the query and in the body; keep one");
    }
    body["timeout"] = req.get_param_value("timeout");
  }
  if (!body.contains("timeout")) return std::chrono::milliseconds(kMaxWait);
  TY_ASSIGN_OR_RETURN(Duration d, protojson::ReadDuration(body["timeout"], "timeout"));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d);
  if (ms.count() < 0) return InvalidFieldError("timeout", "must not be negative");
  return std::min(ms, std::chrono::milliseconds(kMaxWait));
}

}  // namespace

namespace {

void RegisterShape(RouteTable& routes, controller::OperationController* ops,
                   LongPollSlots* long_polls, const std::string& version, const Shape& shape) {
  using auth::Access;
  const std::string list = version + shape.pattern + "/operations";
  const std::string item = list + "/([^/:]+)";
  routes.Get(list, Access::kRead,
             Guarded([ops, shape](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {"filter", "pageSize", "pageToken"}));
               store::ListQuery q;
               q.parent = PrefixOf(req, shape);
               q.filter = req.get_param_value("filter");
               TY_ASSIGN_OR_RETURN(int64_t size, IntParam(req, "pageSize", 0, 0, 1 << 30));
               q.page_size = static_cast<int>(size);
               q.page_token = req.get_param_value("pageToken");
               return ops->List(q);
             }));
  routes.Get(item, Access::kRead,
             Guarded([ops, shape](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               return ops->Get(Name(req, shape));
             }));
  routes.Post(item + ":wait", Access::kRead,
              Guarded([ops, long_polls, shape](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {"timeout"}));
                TY_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, WaitTimeout(req));
                const LongPollSlots::Slot slot =
                    timeout.count() > 0 ? long_polls->TryAcquire() : LongPollSlots::Slot();
                if (!slot) timeout = std::chrono::milliseconds(0);
                return ops->Wait(Name(req, shape), timeout);
              }));
  routes.Post(item + ":cancel", Access::kWrite,
              Guarded([ops, shape](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {}));
                TY_RETURN_IF_ERROR(CheckEmptyBody(req));
                TY_RETURN_IF_ERROR(ops->Cancel(Name(req, shape)));
                return json::object();
              }));
  routes.Delete(item, Access::kWrite,
                Guarded([ops, shape](const httplib::Request& req) -> StatusOr<json> {
                  TY_RETURN_IF_ERROR(CheckParams(req, {}));
                  TY_RETURN_IF_ERROR(ops->Delete(Name(req, shape)));
                  return json::object();
                }));
}

}  // namespace

void RegisterOperationRoutes(RouteTable& routes, controller::OperationController* ops,
                             LongPollSlots* long_polls) {
  for (const char* version : {"/v1", "/v1beta1", "/ui"}) {
    for (const Shape& shape : kShapes) RegisterShape(routes, ops, long_polls, version, shape);
  }
}

}  // namespace trainyard::api
