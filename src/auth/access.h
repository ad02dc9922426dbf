// Who may do what: roles granted to access tokens and the access level every API route declares.
//
//   viewer  get, list, logs, metrics                      (Access::kRead)
//   editor  + create, cancel, delete, storage writes      (Access::kWrite)
//   admin   + audit log, token management                 (Access::kAdmin)
//
// A token belongs to one project ("*": every project, for operators). A route under
// /v1/projects/{p}/ is allowed only for tokens of project p (or "*"); a route outside any project
// (e.g. storage buckets) is allowed for any token whose role reaches the route's level.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::auth {

enum class Role { kViewer = 1, kEditor = 2, kAdmin = 3 };

// The access level a route requires. kPublic routes (GET /healthz) need no token.
enum class Access { kPublic = 0, kRead = 1, kWrite = 2, kAdmin = 3 };

std::string_view RoleName(Role role);        // "viewer", "editor", "admin"
std::string_view AccessName(Access access);  // "public", "read", "write", "admin"
std::optional<Role> ParseRole(std::string_view name);

// The authenticated caller of a request.
struct Principal {
  std::string token_id;
  std::string project;  // "*" = every project
  Role role = Role::kViewer;
  std::string owner;        // the token's owner, "" when it was given none
  std::string description;  // what the token is for, "" when it was given none
};

// OK when `who` may perform an `access` request on `project` ("" for routes outside a project).
// PERMISSION_DENIED naming the token, its grant and what the request needs otherwise.
Status Authorize(const Principal& who, Access access, std::string_view project);

}  // namespace trainyard::auth
