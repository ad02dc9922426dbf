// The server's side of authentication (docs/security.md): tokens and the audit log in
// <data-dir>/auth.db, shared by `trainyard server` and `trainyard auth ...`.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "auth/audit_log.h"
#include "auth/token_store.h"
#include "common/status.h"

namespace trainyard::server {

struct ServerAuth {
  std::unique_ptr<auth::TokenStore> tokens;  // null when authentication is off
  std::unique_ptr<auth::AuditLog> audit;     // always open
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

// Opens <data_dir>/auth.db (mode 0600). Authentication is `flag` when given, else on unless
// `host` is a loopback address; says on `log` whether it is on and, when no token exists yet, how
// to create one (or warns that --no-auth on a non-loopback host lets anyone in). UNAVAILABLE when
// the database cannot be opened or restricted.
StatusOr<ServerAuth> OpenServerAuth(const std::filesystem::path& data_dir, const std::string& host,
                                    std::optional<bool> flag, std::ostream& log);

}  // namespace trainyard::server
