// Access tokens: bearer secrets that authenticate API requests as a Principal (access.h).
//
// A token reads `ty1_<id>_<secret>`: <id> is 16 hex digits, public (it names the token in
// list-tokens, revoke-token and the audit log); <secret> is 256 random bits in hex. Only the
// SHA-256 of the whole token is stored, in the `tokens` table of <data-dir>/auth.db, so a copy
// of the database does not let anyone in. The server checks the database on every request:
// a token created or revoked by `trainyard auth` takes effect at once, without a restart.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/access.h"
#include "auth/sqlite_db.h"

namespace trainyard::auth {

using TimePoint = std::chrono::system_clock::time_point;

struct TokenInfo {
  std::string id;
  std::string project;
  Role role = Role::kViewer;
  TimePoint create_time;
  std::optional<TimePoint> expire_time;
  bool revoked = false;
};

struct NewToken {
  TokenInfo info;
  std::string secret;  // the full bearer token; shown once, never stored
};

// Thread-safe (one serialized SQLite connection).
class TokenStore {
 public:
  // Opens or creates the tokens table in `db_path`. UNAVAILABLE when the file cannot be opened.
  static StatusOr<std::unique_ptr<TokenStore>> Open(const std::filesystem::path& db_path);

  // A new token for `project` (a project id, or "*" for every project) with `role`, valid until
  // `expire_time` when given. INVALID_ARGUMENT for a malformed project id.
  StatusOr<NewToken> Create(const std::string& project, Role role, TimePoint now,
                            std::optional<TimePoint> expire_time);
  // The principal of `bearer`. UNAUTHENTICATED (without telling which check failed, beyond
  // expired/revoked for a token whose secret matched) when it is malformed, unknown, revoked or
  // expired at `now`.
  StatusOr<Principal> Authenticate(const std::string& bearer, TimePoint now);
  // Every token, newest first (revoked ones included, marked).
  StatusOr<std::vector<TokenInfo>> List();
  // Marks `id` revoked. NOT_FOUND when there is no such token.
  Status Revoke(const std::string& id);

 private:
  explicit TokenStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  std::unique_ptr<SqliteDb> db_;
};

// Parses a duration flag: "90d", "12h", "30m", "3600s". INVALID_ARGUMENT otherwise.
StatusOr<std::chrono::seconds> ParseTokenLifetime(const std::string& text);

}  // namespace trainyard::auth
