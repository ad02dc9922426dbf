// RouteTable: every REST route together with the access level it requires, and the one check
// each request passes before its handler runs (STYLE.md §6: one place).
//
// Registering a route means declaring its auth::Access (access.h): there is no other way to add
// a route to the ApiServer (it does not hand out its httplib::Server). The wrapped handler:
//   1. kPublic routes (GET /healthz) run at once;
//   2. with a TokenStore (`trainyard server --auth`): no or a bad `Authorization: Bearer` token is
//      401 UNAUTHENTICATED; a token without the route's access on the project in the path
//      (/v1/projects/{p}/...) is 403 PERMISSION_DENIED — both as google.rpc.Status bodies;
//   3. with an AuditLog: the request, its token and its final HTTP status are appended.
// routes() lists every route, so tests (and GET /v1/routes) can enumerate what the server serves.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "auth/access.h"
#include "auth/audit_log.h"
#include "auth/token_store.h"

// httplib.h is not included here: its <resolv.h> defines `_res`, which breaks Eigen in any file
// that includes both (src/study, tools/trainyard/server_command.cc).
namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace trainyard::api {

// The same type as httplib::Server::Handler.
using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

struct RouteSpec {
  std::string method;   // GET, POST, DELETE, PUT, PATCH
  std::string pattern;  // httplib regex; project routes start with /v1/projects/([^/]+)/
  auth::Access access;
};

struct AuthOptions {
  auth::TokenStore* tokens = nullptr;  // null: requests need no token (and have token id "-")
  auth::AuditLog* audit = nullptr;     // null: nothing is recorded
  std::function<auth::TimePoint()> clock = [] { return std::chrono::system_clock::now(); };
};

class RouteTable {
 public:
  // `server`, options.tokens and options.audit must outlive the table.
  RouteTable(httplib::Server& server, AuthOptions options);

  void Get(const std::string& pattern, auth::Access access, Handler handler);
  void Post(const std::string& pattern, auth::Access access, Handler handler);
  void Put(const std::string& pattern, auth::Access access, Handler handler);
  void Patch(const std::string& pattern, auth::Access access, Handler handler);
  void Delete(const std::string& pattern, auth::Access access, Handler handler);

  const std::vector<RouteSpec>& routes() const { return routes_; }
  bool auth_enabled() const { return options_.tokens != nullptr; }

 private:
  Handler Wrap(RouteSpec spec, Handler handler);
  // OK when the caller of `req` may perform `spec` on `project`; 401/403 Status otherwise.
  // *token_id is the caller's token id once authenticated, else "-".
  Status Check(const httplib::Request& req, const RouteSpec& spec, const std::string& project,
               std::string* token_id) const;

  httplib::Server& server_;
  AuthOptions options_;
  std::vector<RouteSpec> routes_;
};

// The project of a /v1/projects/{p}/... path, "" for any other path.
std::string ProjectOfPath(const std::string& path);

}  // namespace trainyard::api
