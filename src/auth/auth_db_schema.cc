#include "auth/auth_db_schema.h"

#include <string_view>

namespace trainyard::auth {
namespace {

using sqlite::SchemaStep;

// 1: tokens (only the SHA-256 of a secret) and the audit log, exactly as the releases before
// versioned upgrades wrote them.
constexpr std::string_view kTokensAndAudit = R"sql(
CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, sha256 TEXT NOT NULL,
  project TEXT NOT NULL, role TEXT NOT NULL, create_us INTEGER NOT NULL,
  expire_us INTEGER, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY AUTOINCREMENT,
  time_us INTEGER NOT NULL, token_id TEXT NOT NULL, project TEXT NOT NULL,
  method TEXT NOT NULL, path TEXT NOT NULL, access TEXT NOT NULL, status INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS audit_by_project ON audit(project, seq);
)sql";

// 2: what a token is for and whose it is (set at create, shown by list), and when it was last
// used (kept to the minute: TokenStore::Authenticate writes it at most once a minute per token).
// Tokens made before this step get '' for both and no last use.
constexpr std::string_view kTokenDescriptionOwnerLastUse = R"sql(
ALTER TABLE tokens ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN last_use_us INTEGER;
)sql";

// 3: who called from where and what a create made: the client's address and User-Agent, and the
// name of the resource a request created. Rows written before this step get '' for all three.
constexpr std::string_view kAuditClientAndResource = R"sql(
ALTER TABLE audit ADD COLUMN remote_addr TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN resource TEXT NOT NULL DEFAULT '';
)sql";

constexpr SchemaStep kAuthDbSteps[] = {
    {1, "tokens and audit tables", kTokensAndAudit},
    {2, "token description, owner and last use", kTokenDescriptionOwnerLastUse},
    {3, "audit client address, user agent and created resource", kAuditClientAndResource},
};

}  // namespace

std::span<const SchemaStep> AuthDbSchema() { return kAuthDbSteps; }

}  // namespace trainyard::auth
