#include "auth/access.h"

namespace trainyard::auth {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kEditor:
      return "editor";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::string_view AccessName(Access access) {
  switch (access) {
    case Access::kPublic:
      return "public";
    case Access::kRead:
      return "read";
    case Access::kWrite:
      return "write";
    case Access::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kViewer, Role::kEditor, Role::kAdmin}) {
    if (RoleName(r) == name) return r;
  }
  return std::nullopt;
}

Status Authorize(const Principal& who, Access access, std::string_view project) {
  if (access == Access::kPublic) return Status::Ok();
  const std::string grant = "token " + who.token_id + " (role " + std::string(RoleName(who.role)) +
                            " on project " + who.project + ")";
  if (!project.empty() && who.project != "*" && who.project != project) {
    return PermissionDeniedError(grant + " has no access to project " + std::string(project));
  }
  if (static_cast<int>(who.role) < static_cast<int>(access)) {
    const Role needed = static_cast<Role>(static_cast<int>(access));
    return PermissionDeniedError(grant + " may not perform " + std::string(AccessName(access)) +
                                 " requests; they need role " + std::string(RoleName(needed)));
  }
  return Status::Ok();
}

}  // namespace trainyard::auth
