// Access tokens: bearer secrets that authenticate API requests as a Principal (access.h).
//
// A token reads `ty1_<id>_<secret>`: <id> is 16 hex digits, public (it names the token in
// list-tokens, revoke-token, the token API and the audit log); <secret> is 256 random bits in hex.
// Only the SHA-256 of the whole token is stored, in the `tokens` table of <data-dir>/auth.db
// (schema: auth_db_schema.h), so a copy of the database does not let anyone in. The server checks
// the database on every request: a token created, revoked or given a new expiry by
// `trainyard auth` or the token API takes effect at once, without a restart.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/access.h"
#include "auth/sqlite_db.h"

namespace trainyard::auth {

using TimePoint = std::chrono::system_clock::time_point;

struct TokenInfo {
  std::string id;
  std::string project;  // "*" = every project
  Role role = Role::kViewer;
  std::string description;  // what the token is for; "" when not given
  std::string owner;        // who holds it (a name or an email); "" when not given
  TimePoint create_time;
  std::optional<TimePoint> expire_time;    // none: valid until revoked
  std::optional<TimePoint> last_use_time;  // to the minute; none before the first request
  bool revoked = false;
};

enum class TokenState { kActive, kExpired, kRevoked };
// kRevoked when revoked, else kExpired once `now` reaches expire_time, else kActive.
TokenState StateAt(const TokenInfo& token, TimePoint now);
std::string_view TokenStateName(TokenState state);  // "ACTIVE", "EXPIRED", "REVOKED"

// What a new token is given.
struct TokenSpec {
  std::string project;  // a project id, or "*" for every project
  Role role = Role::kViewer;
  std::string description;
  std::string owner;
  std::optional<TimePoint> expire_time;  // none: valid until revoked
};

struct NewToken {
  TokenInfo info;
  std::string secret;  // the full bearer token; shown once, never stored
};

// A page of List: tokens of `project` ("" = every project), newest first.
struct TokenQuery {
  std::string project;
  int limit = 0;           // 0 = every token
  std::string page_token;  // "" = from the newest; else a next_page_token of the same query
};
struct TokenPage {
  std::vector<TokenInfo> tokens;
  std::string next_page_token;  // "" on the last page
};

// Thread-safe (one serialized SQLite connection).
class TokenStore {
 public:
  // Opens `db_path`, bringing it to the current schema (SqliteDb::Open's errors).
  static StatusOr<std::unique_ptr<TokenStore>> Open(const std::filesystem::path& db_path);

  // A new token as `spec` says, created at `now`. INVALID_ARGUMENT naming the field (project,
  // description, owner, expireTime) for a malformed project id, a description or owner over 256
  // bytes or with control characters, or an expiry not after `now`.
  StatusOr<NewToken> Create(const TokenSpec& spec, TimePoint now);
  // The same, without description and owner.
  StatusOr<NewToken> Create(const std::string& project, Role role, TimePoint now,
                            std::optional<TimePoint> expire_time);
  // The principal of `bearer`, whose last use becomes `now` (written at most once a minute per
  // token). UNAUTHENTICATED when it is malformed or unknown (without telling which), or, naming
  // the token id (never the secret), when it is revoked or expired at `now`; in that case only,
  // `refused_id` (when not null) receives that id, for the audit log: the secret matched, so the
  // id is the caller's, not one anybody could claim.
  StatusOr<Principal> Authenticate(const std::string& bearer, TimePoint now,
                                   std::string* refused_id = nullptr);

  // Token `id`. NOT_FOUND when there is no such token.
  StatusOr<TokenInfo> Get(const std::string& id);
  // Every token, newest first (revoked and expired ones included).
  StatusOr<std::vector<TokenInfo>> List();
  // One page of tokens, newest first. INVALID_ARGUMENT naming pageToken for a token this store
  // did not hand out.
  StatusOr<TokenPage> List(const TokenQuery& query);
  // Marks `id` revoked (for good; a revoked token stays listed). NOT_FOUND when there is none.
  Status Revoke(const std::string& id);
  // Sets the expiry of `id` to `expire_time` (later or earlier than before; a revoked token stays
  // revoked). INVALID_ARGUMENT naming expireTime when it is not after `now`; NOT_FOUND when there
  // is no such token. Returns the token as it is now.
  StatusOr<TokenInfo> SetExpireTime(const std::string& id, TimePoint expire_time, TimePoint now);

 private:
  explicit TokenStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  std::unique_ptr<SqliteDb> db_;
};

// Parses a duration flag: "90d", "12h", "30m", "3600s". INVALID_ARGUMENT otherwise.
StatusOr<std::chrono::seconds> ParseTokenLifetime(const std::string& text);

}  // namespace trainyard::auth
