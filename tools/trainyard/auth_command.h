// The server's side of authentication (docs/security.md): tokens and the audit log in
// <data-dir>/auth.db, shared by `trainyard server` and `trainyard auth ...`.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "auth/audit_log.h"
#include "auth/token_store.h"

namespace trainyard::cli {

struct ServerAuth {
  std::unique_ptr<auth::TokenStore> tokens;  // null when authentication is off
  std::unique_ptr<auth::AuditLog> audit;     // always open
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

// Opens <data_dir>/auth.db. Authentication is `flag` when given, else on unless `host` is a
// loopback address; when it is on and no token exists yet, says how to create one on stderr.
// UNAVAILABLE when the database cannot be opened.
StatusOr<ServerAuth> OpenServerAuth(const std::filesystem::path& data_dir, const std::string& host,
                                    std::optional<bool> flag);

}  // namespace trainyard::cli
