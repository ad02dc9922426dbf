#include "server/server_auth.h"

#include <sys/stat.h>

namespace trainyard::server {

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

StatusOr<ServerAuth> OpenServerAuth(const std::filesystem::path& data_dir, const std::string& host,
                                    std::optional<bool> flag, std::ostream& log) {
  ServerAuth out;
  const std::filesystem::path db = data_dir / "auth.db";
  TY_ASSIGN_OR_RETURN(out.audit, auth::AuditLog::Open(db));
  // Token hashes and who did what: readable by the server's user only.
  if (::chmod(db.c_str(), 0600) != 0) return IoError("cannot chmod 0600 " + db.string());
  if (!flag.value_or(!IsLoopbackHost(host))) {
    if (!IsLoopbackHost(host)) {
      log << "WARNING: --no-auth on " << host
          << ": anyone who reaches this port can run commands as this server's user\n";
    }
    return out;
  }
  TY_ASSIGN_OR_RETURN(out.tokens, auth::TokenStore::Open(db));
  TY_ASSIGN_OR_RETURN(std::vector<auth::TokenInfo> existing, out.tokens->List());
  log << "authentication on: every route but GET /healthz needs a bearer token";
  if (existing.empty()) {
    log << "; none exists yet: trainyard auth create-token --data-dir " << data_dir.string()
        << " --project PROJECT --role admin";
  }
  log << "\n";
  return out;
}

}  // namespace trainyard::server
