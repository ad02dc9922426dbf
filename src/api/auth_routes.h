// Routes about access itself (route_table.h):
//   GET /v1/routes                                   every route with its access level (admin)
//   GET /v1/projects/{p}/auditLogs?pageSize&pageToken the project's audit log, oldest first
//                                                    (admin); pageToken is the last seq seen
// Token administration (admin; JSON in auth/token_json.h), under a Trainyard prefix that no
// Google API uses:
//   POST   /trainyard/v1/tokens                       create; the answer carries "secret", once
//   GET    /trainyard/v1/tokens?project&pageSize&pageToken
//                                                    list, newest first (never secrets or hashes)
//   GET    /trainyard/v1/tokens/{id}                  get
//   PATCH  /trainyard/v1/tokens/{id}                  set the expiry ({"expireTime"} or {"ttl"})
//   DELETE /trainyard/v1/tokens/{id}                  revoke (effective on the next request)
// Who: an admin token of project "*" manages every token; an admin token of project P manages
// P's tokens only (create for P, list P's, get/patch/revoke one of P's; any other token is 403,
// and a list without ?project lists P's). So nobody gains access beyond their own. A server
// without --auth keeps no token store: these routes answer FAILED_PRECONDITION there.
#pragma once

#include "api/route_table.h"

namespace trainyard::api {

// `auth.audit` may be null (then auditLogs answers FAILED_PRECONDITION), `auth.tokens` too (then
// the token routes do); both must outlive the server. `auth.clock` is the time of expiries.
void RegisterAuthRoutes(RouteTable& routes, const AuthOptions& auth);

}  // namespace trainyard::api
