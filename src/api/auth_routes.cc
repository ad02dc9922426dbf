#include "api/auth_routes.h"

#include "api/route_util.h"
#include "auth/token_json.h"
#include "protojson/parse.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kTokens = "/trainyard/v1/tokens";
constexpr const char* kToken = "/trainyard/v1/tokens/([^/]+)";

// The token store behind the token routes. A server without --auth opens none: it lets every
// caller in, so a token would guard nothing there.
StatusOr<auth::TokenStore*> TokenStoreOf(const AuthOptions& auth) {
  if (auth.tokens == nullptr) {
    return FailedPreconditionError(
        "this server runs without authentication (--no-auth, or a loopback --host without "
        "--auth), so it manages no tokens; restart it with --auth, or use `trainyard auth "
        "create-token --data-dir DIR` on its data dir");
  }
  return auth.tokens;
}

// The project a token route acts on, for its access check and audit row: that of token {id} in
// the path ("" when there is no such token: the handler answers 404), or the `project` of a create
// body ("" when the body has none: the handler answers 400).
std::string TokenProjectOfPath(auth::TokenStore* tokens, const httplib::Request& req) {
  if (tokens == nullptr) return "";
  StatusOr<auth::TokenInfo> token = tokens->Get(req.matches[1]);
  return token.ok() ? token->project : "";
}
std::string TokenProjectOfBody(const httplib::Request& req) {
  StatusOr<json> body = protojson::ParseJson(req.body);
  if (!body.ok() || !body->is_object()) return "";
  auto it = body->find("project");
  return it != body->end() && it->is_string() ? it->get<std::string>() : "";
}

// OK when the caller may manage tokens of `project`: an admin of that project or of "*" (only
// those manage "*" tokens). The route's own check has already made the caller an admin.
Status MayManage(const RouteTable& routes, const httplib::Request& req,
                 const std::string& project) {
  TY_ASSIGN_OR_RETURN(std::optional<auth::Principal> who, routes.Caller(req));
  if (!who) return Status::Ok();
  return auth::Authorize(*who, auth::Access::kAdmin, project);
}

// Token {id} of the path, once the caller may manage it.
StatusOr<auth::TokenInfo> ManagedToken(const RouteTable& routes, auth::TokenStore* tokens,
                                       const httplib::Request& req) {
  TY_ASSIGN_OR_RETURN(auth::TokenInfo token, tokens->Get(req.matches[1]));
  TY_RETURN_IF_ERROR(MayManage(routes, req, token.project));
  return token;
}

Handler CreateToken(const RouteTable& routes, const AuthOptions& auth) {
  return Guarded([&routes, auth](const httplib::Request& req) -> StatusOr<json> {
    TY_RETURN_IF_ERROR(CheckParams(req, {}));
    TY_ASSIGN_OR_RETURN(auth::TokenStore * tokens, TokenStoreOf(auth));
    TY_ASSIGN_OR_RETURN(json body, protojson::ParseJson(req.body));
    const auth::TimePoint now = auth.clock();
    TY_ASSIGN_OR_RETURN(auth::TokenSpec spec, auth::ParseCreateTokenRequest(body, now));
    TY_RETURN_IF_ERROR(MayManage(routes, req, spec.project));
    TY_ASSIGN_OR_RETURN(auth::NewToken made, tokens->Create(spec, now));
    if (RequestContext* context = routes.CurrentContext())
      context->created = "tokens/" + made.info.id;
    json out = auth::TokenToJson(made.info, now);
    out["secret"] = made.secret;
    return out;
  });
}

Handler ListTokens(const RouteTable& routes, const AuthOptions& auth) {
  return Guarded([&routes, auth](const httplib::Request& req) -> StatusOr<json> {
    TY_RETURN_IF_ERROR(CheckParams(req, {"project", "pageSize", "pageToken"}));
    TY_ASSIGN_OR_RETURN(auth::TokenStore * tokens, TokenStoreOf(auth));
    TY_ASSIGN_OR_RETURN(int64_t size, IntParam(req, "pageSize", 100, 1, 1000));
    auth::TokenQuery q{req.get_param_value("project"), static_cast<int>(size),
                       req.get_param_value("pageToken")};
    // Without ?project, a project admin sees its own project's tokens; "*" admins see all.
    TY_ASSIGN_OR_RETURN(std::optional<auth::Principal> who, routes.Caller(req));
    if (q.project.empty() && who && who->project != "*") q.project = who->project;
    if (!q.project.empty()) TY_RETURN_IF_ERROR(MayManage(routes, req, q.project));
    TY_ASSIGN_OR_RETURN(auth::TokenPage page, tokens->List(q));
    const auth::TimePoint now = auth.clock();
    return ListResponse("tokens", page.tokens, page.next_page_token,
                        [now](const auth::TokenInfo& t) { return auth::TokenToJson(t, now); });
  });
}

Handler GetToken(const RouteTable& routes, const AuthOptions& auth) {
  return Guarded([&routes, auth](const httplib::Request& req) -> StatusOr<json> {
    TY_RETURN_IF_ERROR(CheckParams(req, {}));
    TY_ASSIGN_OR_RETURN(auth::TokenStore * tokens, TokenStoreOf(auth));
    TY_ASSIGN_OR_RETURN(auth::TokenInfo token, ManagedToken(routes, tokens, req));
    return auth::TokenToJson(token, auth.clock());
  });
}

Handler UpdateToken(const RouteTable& routes, const AuthOptions& auth) {
  return Guarded([&routes, auth](const httplib::Request& req) -> StatusOr<json> {
    TY_RETURN_IF_ERROR(CheckParams(req, {}));
    TY_ASSIGN_OR_RETURN(auth::TokenStore * tokens, TokenStoreOf(auth));
    TY_ASSIGN_OR_RETURN(auth::TokenInfo token, ManagedToken(routes, tokens, req));
    TY_ASSIGN_OR_RETURN(json body, protojson::ParseJson(req.body));
    const auth::TimePoint now = auth.clock();
    TY_ASSIGN_OR_RETURN(auth::TimePoint expire, auth::ParseUpdateTokenRequest(body, now));
    TY_ASSIGN_OR_RETURN(token, tokens->SetExpireTime(token.id, expire, now));
    return auth::TokenToJson(token, now);
  });
}

Handler RevokeToken(const RouteTable& routes, const AuthOptions& auth) {
  return Guarded([&routes, auth](const httplib::Request& req) -> StatusOr<json> {
    TY_RETURN_IF_ERROR(CheckParams(req, {}));
    TY_ASSIGN_OR_RETURN(auth::TokenStore * tokens, TokenStoreOf(auth));
    TY_ASSIGN_OR_RETURN(auth::TokenInfo token, ManagedToken(routes, tokens, req));
    TY_RETURN_IF_ERROR(tokens->Revoke(token.id));
    token.revoked = true;
    return auth::TokenToJson(token, auth.clock());
  });
}

// Their paths name no project: each route but the list names the project of the token it acts on,
// so its audit row carries it (and a project's auditLogs show it).
void RegisterTokenRoutes(RouteTable& routes, const AuthOptions& auth) {
  auto of_path = [tokens = auth.tokens](const httplib::Request& req) {
    return TokenProjectOfPath(tokens, req);
  };
  routes.Post(kTokens, auth::Access::kAdmin, CreateToken(routes, auth), TokenProjectOfBody);
  routes.Get(kTokens, auth::Access::kAdmin, ListTokens(routes, auth));
  routes.Get(kToken, auth::Access::kAdmin, GetToken(routes, auth), of_path);
  routes.Patch(kToken, auth::Access::kAdmin, UpdateToken(routes, auth), of_path);
  routes.Delete(kToken, auth::Access::kAdmin, RevokeToken(routes, auth), of_path);
}

}  // namespace

void RegisterAuthRoutes(RouteTable& routes, const AuthOptions& auth) {
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
             Guarded([audit = auth.audit](const httplib::Request& req) -> StatusOr<json> {
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
  RegisterTokenRoutes(routes, auth);
}

}  // namespace trainyard::api
