#include "auth/token_store.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <regex>

#include "common/time.h"

namespace trainyard::auth {
namespace {

std::string Hex(const unsigned char* data, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

StatusOr<std::string> RandomHex(size_t bytes) {
  std::string buf(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(buf.data()), static_cast<int>(bytes)) != 1) {
    return InternalError("the OpenSSL random generator failed");
  }
  return Hex(reinterpret_cast<const unsigned char*>(buf.data()), bytes);
}

std::string Sha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  return Hex(digest, len);
}

// Google's wording for a missing or bad credential, plus how to get one here.
Status Unauthenticated(const std::string& why) {
  return UnauthenticatedError(
      "Request had invalid authentication credentials (" + why +
      "). Expected an access token from `trainyard auth create-token`; see docs/security.md.");
}

// Description and owner are shown in tables and JSON: bounded, and without control characters
// that would garble a terminal.
Status CheckLabel(const std::string& field, const std::string& value) {
  if (value.size() > 256) {
    return InvalidArgumentError(field + ": at most 256 bytes (got " + std::to_string(value.size()) +
                                ")");
  }
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      return InvalidArgumentError(field +
                                  ": control characters (newlines, tabs, ...) are not "
                                  "allowed");
    }
  }
  return Status::Ok();
}

Status CheckSpec(const TokenSpec& spec, TimePoint now) {
  // Google Cloud project ids: 6-30 of a-z 0-9 -, starting with a letter; Trainyard also accepts
  // the shorter ids its own examples use ("local", "p").
  static const std::regex kProject("[a-z][a-z0-9-]{0,29}");
  if (spec.project != "*" && !std::regex_match(spec.project, kProject)) {
    return InvalidArgumentError("project: '" + spec.project +
                                "' is not a project id (a-z, 0-9, '-', starting with a letter, "
                                "at most 30) nor '*' (every project)");
  }
  TY_RETURN_IF_ERROR(CheckLabel("description", spec.description));
  TY_RETURN_IF_ERROR(CheckLabel("owner", spec.owner));
  if (spec.expire_time && *spec.expire_time <= now) {
    return InvalidArgumentError("expireTime: " + FormatTimestamp(*spec.expire_time) +
                                " is not in the future");
  }
  return Status::Ok();
}

constexpr const char* kColumns =
    "id, project, role, create_us, expire_us, revoked, description, owner, last_use_us";

// The TokenInfo of a row selected with kColumns.
TokenInfo ReadToken(const sqlite::Stmt& s) {
  TokenInfo t;
  t.id = s.Text(0);
  t.project = s.Text(1);
  t.role = ParseRole(s.Text(2)).value_or(Role::kViewer);
  t.create_time = FromUnixMicros(s.Int(3));
  if (!s.IsNull(4)) t.expire_time = FromUnixMicros(s.Int(4));
  t.revoked = s.Int(5) != 0;
  t.description = s.Text(6);
  t.owner = s.Text(7);
  if (!s.IsNull(8)) t.last_use_time = FromUnixMicros(s.Int(8));
  return t;
}

Status NoSuchToken(const std::string& id) {
  return NotFoundError("no token with id '" + id + "'; see `trainyard auth list-tokens`");
}

// A page token is the last token of the page: "<create_us>.<id>", the list's sort key.
std::string PageTokenOf(const TokenInfo& last) {
  return std::to_string(ToUnixMicros(last.create_time)) + "." + last.id;
}

}  // namespace

TokenState StateAt(const TokenInfo& token, TimePoint now) {
  if (token.revoked) return TokenState::kRevoked;
  if (token.expire_time && now >= *token.expire_time) return TokenState::kExpired;
  return TokenState::kActive;
}

std::string_view TokenStateName(TokenState state) {
  switch (state) {
    case TokenState::kActive:
      return "ACTIVE";
    case TokenState::kExpired:
      return "EXPIRED";
    case TokenState::kRevoked:
      return "REVOKED";
  }
  return "UNKNOWN";
}

StatusOr<std::unique_ptr<TokenStore>> TokenStore::Open(const std::filesystem::path& db_path) {
  TY_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path));
  return std::unique_ptr<TokenStore>(new TokenStore(std::move(db)));
}

StatusOr<NewToken> TokenStore::Create(const std::string& project, Role role, TimePoint now,
                                      std::optional<TimePoint> expire_time) {
  return Create(TokenSpec{project, role, "", "", expire_time}, now);
}

StatusOr<NewToken> TokenStore::Create(const TokenSpec& spec, TimePoint now) {
  TY_RETURN_IF_ERROR(CheckSpec(spec, now));
  NewToken out;
  TY_ASSIGN_OR_RETURN(out.info.id, RandomHex(8));
  TY_ASSIGN_OR_RETURN(std::string secret, RandomHex(32));
  out.secret = "ty1_" + out.info.id + "_" + secret;
  out.info.project = spec.project;
  out.info.role = spec.role;
  out.info.description = spec.description;
  out.info.owner = spec.owner;
  out.info.create_time = now;
  out.info.expire_time = spec.expire_time;
  sqlite::Stmt s(db_->get(),
                 "INSERT INTO tokens(id, sha256, project, role, create_us, expire_us, description, "
                 "owner) VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
  if (!s.Prepared().ok()) return db_->Error("prepare insert");
  s.Bind(1, out.info.id);
  s.Bind(2, Sha256Hex(out.secret));
  s.Bind(3, spec.project);
  s.Bind(4, std::string(RoleName(spec.role)));
  s.Bind(5, ToUnixMicros(now));
  if (spec.expire_time) s.Bind(6, ToUnixMicros(*spec.expire_time));
  s.Bind(7, spec.description);
  s.Bind(8, spec.owner);
  if (s.Step() != SQLITE_DONE) return db_->Error("insert token");
  return out;
}

StatusOr<Principal> TokenStore::Authenticate(const std::string& bearer, TimePoint now,
                                             std::string* refused_id) {
  static const std::regex kFormat("ty1_([0-9a-f]{16})_[0-9a-f]{64}");
  std::smatch m;
  if (!std::regex_match(bearer, m, kFormat)) return Unauthenticated("not a Trainyard token");
  const std::string id = m[1].str();
  sqlite::Stmt s(db_->get(),
                 "SELECT sha256, project, role, expire_us, revoked, last_use_us, owner, "
                 "description FROM tokens WHERE id = ?");
  if (!s.Prepared().ok()) return db_->Error("prepare select");
  s.Bind(1, id);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return Unauthenticated("unknown token");
  if (rc != SQLITE_ROW) return db_->Error("select token");
  const std::string want = s.Text(0), got = Sha256Hex(bearer);
  if (want.size() != got.size() || CRYPTO_memcmp(want.data(), got.data(), got.size()) != 0) {
    return Unauthenticated("unknown token");
  }
  const bool revoked = s.Int(4) != 0;
  const bool expired = !s.IsNull(3) && ToUnixMicros(now) >= s.Int(3);
  if ((revoked || expired) && refused_id != nullptr) *refused_id = id;
  if (revoked) return Unauthenticated("token " + id + " was revoked");
  if (expired) return Unauthenticated("token " + id + " has expired");
  std::optional<Role> role = ParseRole(s.Text(2));
  if (!role) return DataLossError("auth database: token " + id + " has role " + s.Text(2));
  Principal who{id, s.Text(1), *role, s.Text(6), s.Text(7)};
  // To the minute: a write per request would double the database writes (the audit log already
  // makes one). A failed write loses only this hint, so the request goes on.
  constexpr int64_t kMinuteUs = 60'000'000;
  if (s.IsNull(5) || ToUnixMicros(now) - s.Int(5) >= kMinuteUs) {
    sqlite::Stmt touch(db_->get(), "UPDATE tokens SET last_use_us = ? WHERE id = ?");
    touch.Bind(1, ToUnixMicros(now));
    touch.Bind(2, id);
    if (touch.Prepared().ok()) touch.Step();
  }
  return who;
}

StatusOr<TokenInfo> TokenStore::Get(const std::string& id) {
  sqlite::Stmt s(db_->get(), std::string("SELECT ") + kColumns + " FROM tokens WHERE id = ?");
  if (!s.Prepared().ok()) return db_->Error("prepare get");
  s.Bind(1, id);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return NoSuchToken(id);
  if (rc != SQLITE_ROW) return db_->Error("get token");
  return ReadToken(s);
}

StatusOr<std::vector<TokenInfo>> TokenStore::List() {
  TY_ASSIGN_OR_RETURN(TokenPage all, List(TokenQuery{}));
  return std::move(all.tokens);
}

StatusOr<TokenPage> TokenStore::List(const TokenQuery& q) {
  // After the page token's (create_us, id): older, or as old with a larger id.
  int64_t after_us = 0;
  std::string after_id;
  if (!q.page_token.empty()) {
    static const std::regex kPageToken("(-?[0-9]{1,19})\\.([0-9a-f]{16})");
    std::smatch m;
    if (!std::regex_match(q.page_token, m, kPageToken)) {
      return InvalidArgumentError("pageToken: '" + q.page_token +
                                  "' is not a nextPageToken of this list");
    }
    after_us = std::stoll(m[1].str());
    after_id = m[2].str();
  }
  sqlite::Stmt s(db_->get(), std::string("SELECT ") + kColumns +
                                 " FROM tokens WHERE (?1 = '' OR project = ?1) AND (?2 = '' OR "
                                 "create_us < ?3 OR (create_us = ?3 AND id > ?2)) "
                                 "ORDER BY create_us DESC, id LIMIT ?4");
  if (!s.Prepared().ok()) return db_->Error("prepare list");
  s.Bind(1, q.project);
  s.Bind(2, after_id);
  s.Bind(3, after_us);
  s.Bind(4, q.limit > 0 ? static_cast<int64_t>(q.limit) + 1 : int64_t{-1});
  TokenPage out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.tokens.push_back(ReadToken(s));
  if (rc != SQLITE_DONE) return db_->Error("list tokens");
  // One row past the page says there is a next one.
  if (q.limit > 0 && out.tokens.size() > static_cast<size_t>(q.limit)) {
    out.tokens.pop_back();
    out.next_page_token = PageTokenOf(out.tokens.back());
  }
  return out;
}

Status TokenStore::Revoke(const std::string& id) {
  sqlite::Stmt s(db_->get(), "UPDATE tokens SET revoked = 1 WHERE id = ?");
  if (!s.Prepared().ok()) return db_->Error("prepare revoke");
  s.Bind(1, id);
  if (s.Step() != SQLITE_DONE) return db_->Error("revoke token");
  if (sqlite3_changes(db_->get()) == 0) return NoSuchToken(id);
  return Status::Ok();
}

StatusOr<TokenInfo> TokenStore::SetExpireTime(const std::string& id, TimePoint expire_time,
                                              TimePoint now) {
  if (expire_time <= now) {
    return InvalidArgumentError("expireTime: " + FormatTimestamp(expire_time) +
                                " is not in the future; to stop a token now, revoke it");
  }
  sqlite::Stmt s(db_->get(), "UPDATE tokens SET expire_us = ? WHERE id = ?");
  if (!s.Prepared().ok()) return db_->Error("prepare expiry update");
  s.Bind(1, ToUnixMicros(expire_time));
  s.Bind(2, id);
  if (s.Step() != SQLITE_DONE) return db_->Error("set token expiry");
  if (sqlite3_changes(db_->get()) == 0) return NoSuchToken(id);
  return Get(id);
}

StatusOr<std::chrono::seconds> ParseTokenLifetime(const std::string& text) {
  static const std::regex kDuration("([0-9]{1,6})([smhd])");
  std::smatch m;
  if (!std::regex_match(text, m, kDuration) || std::stoll(m[1].str()) == 0) {
    return InvalidArgumentError("--expires: '" + text +
                                "' is not a duration; write e.g. 90d, 12h, 30m or 3600s");
  }
  const int64_t n = std::stoll(m[1].str());
  const char unit = m[2].str()[0];
  const int64_t scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
  return std::chrono::seconds(n * scale);
}

}  // namespace trainyard::auth
