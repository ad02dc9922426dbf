// auth.db's schema steps (auth_db_schema.h): a new file gets every step; a file written before
// versioned upgrades (the same tables, user_version 0) is adopted with its tokens and audit rows;
// a file from a newer Trainyard is refused untouched.
#include "auth/auth_db_schema.h"

#include <gtest/gtest.h>

#include "auth/audit_log.h"
#include "auth/token_store.h"
#include "sqlite/sqlite.h"
#include "testing/test_util.h"

namespace trainyard::auth {
namespace {

const TimePoint kSchemaNow = TimePoint(std::chrono::seconds(1'800'000'000));

// The schema of auth.db as the releases before versioned upgrades wrote it (token_store.cc and
// audit_log.cc, each with IF NOT EXISTS; user_version stayed 0), with one token and two audit
// rows. The token is ty1_0123456789abcdef_<64 zeros> (sha256 below), created at kSchemaNow.
constexpr const char* kUnversionedAuthDb = R"sql(
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, time_us INTEGER NOT NULL,
  token_id TEXT NOT NULL, project TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL,
  access TEXT NOT NULL, status INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS audit_by_project ON audit(project, seq);
CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, sha256 TEXT NOT NULL,
  project TEXT NOT NULL, role TEXT NOT NULL, create_us INTEGER NOT NULL, expire_us INTEGER,
  revoked INTEGER NOT NULL DEFAULT 0);
INSERT INTO tokens(id, sha256, project, role, create_us) VALUES('0123456789abcdef',
  '66f4989e10feed28eccf85c533e22300057ec83f82caf0bd3bb0d5ba672ad0a7', 'alpha', 'editor',
  1800000000000000);
INSERT INTO audit(time_us, token_id, project, method, path, access, status) VALUES
  (1800000000000000, '0123456789abcdef', 'alpha', 'GET', '/v1/a', 'read', 200),
  (1800000001000000, '-', 'alpha', 'GET', '/v1/b', 'read', 401);
)sql";
const std::string kOldToken = "ty1_0123456789abcdef_" + std::string(64, '0');

// The version of `path` and the columns of its tokens table: "v2: id sha256 ...".
std::string Shape(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return "cannot open";
  std::string out = "v" + std::to_string(sqlite::SchemaVersion(db).value_or(-1)) + ":";
  {
    sqlite::Stmt q(db, "SELECT name FROM pragma_table_info('tokens') ORDER BY cid");
    while (q.Step() == SQLITE_ROW) out += " " + q.Text(0);
  }
  sqlite3_close(db);
  return out;
}

constexpr const char* kLatestShape =
    "v3: id sha256 project role create_us expire_us revoked description owner last_use_us";

TEST(AuthDbSchemaTest, ANewFileGetsEveryStepWhicheverOpensFirst) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(AuditLog::Open(dir / "audit-first.db").ok());
  ASSERT_TRUE(TokenStore::Open(dir / "tokens-first.db").ok());
  EXPECT_EQ(Shape(dir / "audit-first.db") + "\n" + Shape(dir / "tokens-first.db"),
            std::string(kLatestShape) + "\n" + kLatestShape);
}

TEST(AuthDbSchemaTest, AnUnversionedFileIsAdoptedWithItsTokensAndAuditRows) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(sqlite::ExecSqlOnFile(dir / "auth.db", kUnversionedAuthDb).ok());
  ASSERT_EQ(Shape(dir / "auth.db"), "v0: id sha256 project role create_us expire_us revoked");
  auto tokens = TokenStore::Open(dir / "auth.db");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  auto audit = AuditLog::Open(dir / "auth.db");
  ASSERT_TRUE(audit.ok()) << audit.status();
  EXPECT_EQ(Shape(dir / "auth.db"), kLatestShape);
  auto who = (*tokens)->Authenticate(kOldToken, kSchemaNow);
  ASSERT_TRUE(who.ok()) << who.status();
  auto token = (*tokens)->Get("0123456789abcdef");
  auto rows = (*audit)->Query({});
  ASSERT_TRUE(token.ok() && rows.ok());
  EXPECT_EQ(who->project + " " + std::string(RoleName(who->role)) + " '" + token->description +
                "' '" + token->owner + "' " + std::to_string(rows->size()) + " " +
                rows->back().path,
            "alpha editor '' '' 2 /v1/b");
}

// Step 3: rows from before it read back without client or resource; new rows keep all three.
TEST(AuthDbSchemaTest, AuditRowsGainClientAddressUserAgentAndResource) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(sqlite::ExecSqlOnFile(dir / "auth.db", kUnversionedAuthDb).ok());
  auto audit = AuditLog::Open(dir / "auth.db");
  ASSERT_TRUE(audit.ok()) << audit.status();
  AuditEntry created{0,
                     kSchemaNow,
                     "0123456789abcdef",
                     "alpha",
                     "POST",
                     "/v1/c",
                     "write",
                     200,
                     "10.0.0.7",
                     "trainyard-cli/1",
                     "projects/alpha/locations/l/customJobs/1"};
  ASSERT_TRUE((*audit)->Append(created).ok());
  auto rows = (*audit)->Query({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::string got;
  for (const AuditEntry& e : *rows) {
    got += AuditEntryToJson(e).dump() + "\n";
  }
  EXPECT_EQ(got,
            R"({"access":"read","method":"GET","path":"/v1/a","project":"alpha","seq":"1",)"
            R"("status":200,"time":"2027-01-15T08:00:00.000000Z","tokenId":"0123456789abcdef"})"
            "\n"
            R"({"access":"read","method":"GET","path":"/v1/b","project":"alpha","seq":"2",)"
            R"("status":401,"time":"2027-01-15T08:00:01.000000Z","tokenId":"-"})"
            "\n"
            R"({"access":"write","callerIp":"10.0.0.7","method":"POST","path":"/v1/c",)"
            R"("project":"alpha","resourceName":"projects/alpha/locations/l/customJobs/1",)"
            R"("seq":"3","status":200,"time":"2027-01-15T08:00:00.000000Z",)"
            R"("tokenId":"0123456789abcdef","userAgent":"trainyard-cli/1"})"
            "\n");
}

TEST(AuthDbSchemaTest, AFileFromANewerTrainyardIsRefusedUntouched) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(
      sqlite::ExecSqlOnFile(dir / "auth.db", "CREATE TABLE x(a); PRAGMA user_version = 99;").ok());
  auto tokens = TokenStore::Open(dir / "auth.db");
  auto audit = AuditLog::Open(dir / "auth.db");
  const std::string refused =
      "FAILED_PRECONDITION: " + (dir / "auth.db").string() +
      " was written by a newer Trainyard (schema 99 > 3); upgrade trainyard";
  EXPECT_EQ(tokens.status().ToString() + "\n" + audit.status().ToString(),
            refused + "\n" + refused);
  EXPECT_EQ(Shape(dir / "auth.db"), "v99:");
}

}  // namespace
}  // namespace trainyard::auth
