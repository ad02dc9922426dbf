#include "auth/token_store.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <regex>

#include "common/time.h"

namespace trainyard::auth {
namespace {

constexpr const char* kTokenSchema =
    "CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, sha256 TEXT NOT NULL, "
    "project TEXT NOT NULL, role TEXT NOT NULL, create_us INTEGER NOT NULL, "
    "expire_us INTEGER, revoked INTEGER NOT NULL DEFAULT 0)";

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

}  // namespace

StatusOr<std::unique_ptr<TokenStore>> TokenStore::Open(const std::filesystem::path& db_path) {
  TY_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path, kTokenSchema));
  return std::unique_ptr<TokenStore>(new TokenStore(std::move(db)));
}

StatusOr<NewToken> TokenStore::Create(const std::string& project, Role role, TimePoint now,
                                      std::optional<TimePoint> expire_time) {
  // Google Cloud project ids: 6-30 of a-z 0-9 -, starting with a letter; Trainyard also accepts
  // the shorter ids its own examples use ("local", "p").
  static const std::regex kProject("[a-z][a-z0-9-]{0,29}");
  if (project != "*" && !std::regex_match(project, kProject)) {
    return InvalidArgumentError("--project: '" + project +
                                "' is not a project id (a-z, 0-9, '-', starting with a letter, "
                                "at most 30) nor '*' (every project)");
  }
  NewToken out;
  TY_ASSIGN_OR_RETURN(out.info.id, RandomHex(8));
  TY_ASSIGN_OR_RETURN(std::string secret, RandomHex(32));
  out.secret = "ty1_" + out.info.id + "_" + secret;
  out.info.project = project;
  out.info.role = role;
  out.info.create_time = now;
  out.info.expire_time = expire_time;
  sqlite::Stmt s(db_->get(),
                 "INSERT INTO tokens(id, sha256, project, role, create_us, expire_us) "
                 "VALUES(?, ?, ?, ?, ?, ?)");
  if (!s.Prepared().ok()) return db_->Error("prepare insert");
  s.Bind(1, out.info.id);
  s.Bind(2, Sha256Hex(out.secret));
  s.Bind(3, project);
  s.Bind(4, std::string(RoleName(role)));
  s.Bind(5, ToUnixMicros(now));
  if (expire_time) s.Bind(6, ToUnixMicros(*expire_time));
  if (s.Step() != SQLITE_DONE) return db_->Error("insert token");
  return out;
}

StatusOr<Principal> TokenStore::Authenticate(const std::string& bearer, TimePoint now) {
  static const std::regex kFormat("ty1_([0-9a-f]{16})_[0-9a-f]{64}");
  std::smatch m;
  if (!std::regex_match(bearer, m, kFormat)) return Unauthenticated("not a Trainyard token");
  sqlite::Stmt s(db_->get(),
                 "SELECT sha256, project, role, expire_us, revoked FROM tokens WHERE id = ?");
  if (!s.Prepared().ok()) return db_->Error("prepare select");
  s.Bind(1, m[1].str());
  int rc = s.Step();
  if (rc == SQLITE_DONE) return Unauthenticated("unknown token");
  if (rc != SQLITE_ROW) return db_->Error("select token");
  const std::string want = s.Text(0), got = Sha256Hex(bearer);
  if (want.size() != got.size() || CRYPTO_memcmp(want.data(), got.data(), got.size()) != 0) {
    return Unauthenticated("unknown token");
  }
  if (s.Int(4) != 0) return Unauthenticated("token " + m[1].str() + " was revoked");
  if (!s.IsNull(3) && ToUnixMicros(now) >= s.Int(3)) {
    return Unauthenticated("token " + m[1].str() + " has expired");
  }
  std::optional<Role> role = ParseRole(s.Text(2));
  if (!role) return DataLossError("auth database: token " + m[1].str() + " has role " + s.Text(2));
  return Principal{m[1].str(), s.Text(1), *role};
}

StatusOr<std::vector<TokenInfo>> TokenStore::List() {
  sqlite::Stmt s(db_->get(),
                 "SELECT id, project, role, create_us, expire_us, revoked FROM tokens "
                 "ORDER BY create_us DESC, id");
  if (!s.Prepared().ok()) return db_->Error("prepare list");
  std::vector<TokenInfo> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TokenInfo t;
    t.id = s.Text(0);
    t.project = s.Text(1);
    t.role = ParseRole(s.Text(2)).value_or(Role::kViewer);
    t.create_time = FromUnixMicros(s.Int(3));
    if (!s.IsNull(4)) t.expire_time = FromUnixMicros(s.Int(4));
    t.revoked = s.Int(5) != 0;
    out.push_back(std::move(t));
  }
  if (rc != SQLITE_DONE) return db_->Error("list tokens");
  return out;
}

Status TokenStore::Revoke(const std::string& id) {
  sqlite::Stmt s(db_->get(), "UPDATE tokens SET revoked = 1 WHERE id = ?");
  if (!s.Prepared().ok()) return db_->Error("prepare revoke");
  s.Bind(1, id);
  if (s.Step() != SQLITE_DONE) return db_->Error("revoke token");
  if (sqlite3_changes(db_->get()) == 0) {
    return NotFoundError("no token with id '" + id + "'; see `trainyard auth list-tokens`");
  }
  return Status::Ok();
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
