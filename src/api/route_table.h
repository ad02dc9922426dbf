// RouteTable: every REST route together with the access level it requires, and the one check
// each request passes before its handler runs (STYLE.md §6: one place).
//
// Registering a route means declaring its auth::Access (access.h): there is no other way to add
// a route to the ApiServer (it does not hand out its httplib::Server). The wrapped handler:
//   1. kPublic routes (GET /healthz) run at once;
//   2. with a TokenStore (`trainyard server --auth`): no or a bad `Authorization: Bearer` token is
//      401 UNAUTHENTICATED; a token without the route's access on the project in the path
//      (/v1/projects/{p}/...) is 403 PERMISSION_DENIED — both as google.rpc.Status bodies;
//   3. with a create limiter (rate_limiter.h): a create over the caller's rate is 429
//      RESOURCE_EXHAUSTED with Retry-After;
//   4. with an AuditLog: the request, its token (a revoked or expired token's own id), the
//      client's address and User-Agent, the resource a create made (RequestContext::created) and
//      its final HTTP status are appended (not for a served GET /metrics: a Prometheus scrape
//      every few seconds would be most of the log).
// While a handler runs, CurrentContext() gives it the caller the check authenticated, and takes
// back the name of what it created.
// routes() lists every route, so tests (and GET /v1/routes) can enumerate what the server serves.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/rate_limiter.h"
#include "auth/access.h"
#include "auth/audit_log.h"
#include "auth/token_store.h"

// httplib.h is not included here: its <resolv.h> defines `_res`, which breaks Eigen in any file
// that includes both (src/tuning through controller/, src/server/server.cc).
namespace httplib {
class Server;
class ContentReader;
struct Request;
struct Response;
}  // namespace httplib

namespace trainyard::api {

// The same type as httplib::Server::Handler.
using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
// The same type as httplib::Server::HandlerWithContentReader: the handler reads the body itself
// (streamed uploads, src/storage).
using ReaderHandler =
    std::function<void(const httplib::Request&, httplib::Response&, const httplib::ContentReader&)>;
// The project a request acts on, for routes whose path does not name it (Cloud Logging names it
// in the body). "" = no project: any token whose role reaches the route's access passes.
using ProjectOf = std::function<std::string(const httplib::Request&)>;

struct RouteSpec {
  std::string method;   // GET, POST, DELETE, PUT, PATCH
  std::string pattern;  // httplib regex; project routes start with /v1/projects/([^/]+)/
  auth::Access access;
};

// What the server's request log records of one request (server/server_log.h).
struct RequestRecord {
  std::string method;
  std::string path;
  std::string route;                     // the RouteSpec pattern that served it
  int status = 0;                        // HTTP status
  std::chrono::microseconds latency{0};  // from the access check to the handler's return
  std::string token_id;                  // "-" without a token
  std::string project;                   // "" outside a project
  std::string remote_addr;
  std::string user_agent;
};
using RequestObserver = std::function<void(const RequestRecord&)>;

// What the access check learned of a request, and what its handler reports back for the audit
// log; lives while the handler runs (RouteTable::CurrentContext).
struct RequestContext {
  std::optional<auth::Principal> caller;  // nullopt when the server runs without tokens
  std::string remote_addr;                // the client's address as the server saw it
  std::string user_agent;                 // its User-Agent header, "" when none
  std::string created;  // set by a create handler: the full name of the resource it made
};

struct AuthOptions {
  auth::TokenStore* tokens = nullptr;  // null: requests need no token (and have token id "-")
  auth::AuditLog* audit = nullptr;     // null: nothing is recorded
  std::function<auth::TimePoint()> clock = [] { return std::chrono::system_clock::now(); };
  // Creates per caller (rate_limiter.h); null: unlimited. Must outlive the table.
  RateLimiter* create_limiter = nullptr;
};

// `regex` rewritten to match exactly the same paths without the substring "/:". cpp-httplib 0.14
// and later take a pattern containing "/:" for a path-parameter pattern ("/users/:id"), not a
// regex, so "customJobs/([^/:]+):logs" (the usual id class) matched nothing under Debian 13's
// 0.18 while Debian 12's 0.11 served it. Inside a bracket expression "/:" becomes ":/"; outside,
// the ':' becomes "[:]". Every RouteTable method registers its pattern through this; routes()
// lists the pattern as given.
std::string HttplibRegex(const std::string& regex);

// The query parameters of a request target ("/path?a=1&b=x=y"), each split at its first '=' and
// URL-decoded ('+' is a space), as Google's front end reads them: "filter=state=DONE" is filter
// "state=DONE" (cpp-httplib keeps the text after the last '=' instead). Every route's handler
// sees these in req.params.
std::multimap<std::string, std::string> SplitQuery(const std::string& target);

class RouteTable {
 public:
  // `server`, options.tokens and options.audit must outlive the table.
  RouteTable(httplib::Server& server, AuthOptions options);

  // `project_of`, when set, replaces ProjectOfPath for this route.
  void Get(const std::string& pattern, auth::Access access, Handler handler,
           ProjectOf project_of = nullptr);
  void Post(const std::string& pattern, auth::Access access, Handler handler,
            ProjectOf project_of = nullptr);
  void Put(const std::string& pattern, auth::Access access, Handler handler);
  void Patch(const std::string& pattern, auth::Access access, Handler handler,
             ProjectOf project_of = nullptr);
  void Delete(const std::string& pattern, auth::Access access, Handler handler,
              ProjectOf project_of = nullptr);
  // Body-streaming variants (httplib calls them for requests with a body); a route registered
  // with the same method, pattern and access as a plain one is listed once in routes().
  void Post(const std::string& pattern, auth::Access access, ReaderHandler handler);
  void Put(const std::string& pattern, auth::Access access, ReaderHandler handler);
  void Patch(const std::string& pattern, auth::Access access, ReaderHandler handler);
  void Delete(const std::string& pattern, auth::Access access, ReaderHandler handler);

  // Adds a function httplib calls after every response (request counting, src/observability).
  // Loggers are chained in the order added; none replaces another.
  using Logger = std::function<void(const httplib::Request&, const httplib::Response&)>;
  void AddLogger(Logger logger);

  // Called after every request of a route that is not kPublic (those pass no check: probes and
  // console files), with what it was and how it ended. Set it before serving.
  void SetRequestObserver(RequestObserver observer) { observer_ = std::move(observer); }

  const std::vector<RouteSpec>& routes() const { return routes_; }
  bool auth_enabled() const { return options_.tokens != nullptr; }

  // The authenticated caller of `req` (its Authorization: Bearer token), for handlers whose answer
  // depends on who asks (GET /v1/caller, GET /v1/projects). nullopt when the server runs without
  // tokens (every caller may do everything); UNAUTHENTICATED for a missing or bad token.
  StatusOr<std::optional<auth::Principal>> Caller(const httplib::Request& req) const;

  // The context of the request whose handler runs on the calling thread (cpp-httplib runs each
  // handler on one thread; keyed by thread, not by request, since handlers may serve a copy of
  // theirs, as Guarded does for enum-encoding=int): the caller it was let in as; the handler may
  // set `created`. Null outside the handler of a route that is not kPublic. Thread-safe; the
  // pointer is valid until the handler returns.
  RequestContext* CurrentContext() const;

 private:
  Handler Wrap(RouteSpec spec, Handler handler, ProjectOf project_of = nullptr);
  ReaderHandler WrapReader(RouteSpec spec, ReaderHandler handler);
  void Record(const RouteSpec& spec);
  // Checks the caller, runs `serve` when allowed (an error response otherwise), then audits
  // (every request of a non-public route but a served GET /metrics: scrapes would flood the log).
  void Serve(const RouteSpec& spec, const ProjectOf& project_of, const httplib::Request& req,
             httplib::Response& res, const std::function<void()>& serve) const;
  // OK when the caller of `req` may perform `spec` on `project`; 401/403 Status otherwise.
  // *token_id is the caller's token id once authenticated (also a revoked or expired token's),
  // else "-"; context->caller the authenticated principal.
  Status Check(const httplib::Request& req, const RouteSpec& spec, const std::string& project,
               RequestContext* context, std::string* token_id) const;
  // Caller(req); `refused_id` receives the id of a revoked or expired token (TokenStore).
  StatusOr<std::optional<auth::Principal>> Caller(const httplib::Request& req,
                                                  std::string* refused_id) const;
  // The audit row of a request that ended with `status`.
  void Audit(const RouteSpec& spec, const httplib::Request& req, const std::string& project,
             const std::string& token_id, const RequestContext& context, int status) const;

  httplib::Server& server_;
  AuthOptions options_;
  std::vector<RouteSpec> routes_;
  RequestObserver observer_;
  // The contexts of the requests whose handlers are running, by the thread that runs each (Serve
  // adds and removes them).
  mutable std::mutex contexts_mu_;
  mutable std::map<std::thread::id, RequestContext*> contexts_;
  std::shared_ptr<std::vector<Logger>> loggers_ = std::make_shared<std::vector<Logger>>();
};

// The project of a /v1/projects/{p}/... path (or /ui/projects/{p}/..., any first segment), ""
// for any other path.
std::string ProjectOfPath(const std::string& path);
// The location of a /v1/projects/{p}/locations/{l}/... path, "" for any other. Every route under
// a location answers 400 naming `parent` for a location that is not a known region
// (machines/regions.h): a typo would otherwise make a location of its own.
std::string LocationOfPath(const std::string& path);

}  // namespace trainyard::api
