#include <gtest/gtest.h>

#include "auth/access.h"
#include "auth/audit_log.h"
#include "auth/token_store.h"
#include "testing/test_util.h"

namespace trainyard::auth {
namespace {

using std::chrono::hours;

const TimePoint kNow = TimePoint(std::chrono::seconds(1'800'000'000));

std::string Verdict(const Status& s) {
  return s.ok() ? "ok" : std::string(StatusCodeName(s.code()));
}

TEST(AccessTest, RolesAndProjects) {
  const Principal viewer{"v", "alpha", Role::kViewer}, editor{"e", "alpha", Role::kEditor},
      admin{"a", "alpha", Role::kAdmin}, ops{"o", "*", Role::kEditor};
  std::string table;
  for (const Principal* p : {&viewer, &editor, &admin, &ops}) {
    for (Access a : {Access::kPublic, Access::kRead, Access::kWrite, Access::kAdmin}) {
      table += Verdict(Authorize(*p, a, "alpha")) + "/" + Verdict(Authorize(*p, a, "beta")) + " ";
    }
    table += "\n";
  }
  EXPECT_EQ(table,
            "ok/ok ok/PERMISSION_DENIED PERMISSION_DENIED/PERMISSION_DENIED "
            "PERMISSION_DENIED/PERMISSION_DENIED \n"
            "ok/ok ok/PERMISSION_DENIED ok/PERMISSION_DENIED PERMISSION_DENIED/PERMISSION_DENIED \n"
            "ok/ok ok/PERMISSION_DENIED ok/PERMISSION_DENIED ok/PERMISSION_DENIED \n"
            "ok/ok ok/ok ok/ok PERMISSION_DENIED/PERMISSION_DENIED \n");
  EXPECT_EQ(Authorize(viewer, Access::kWrite, "alpha").message(),
            "token v (role viewer on project alpha) may not perform write requests; they need "
            "role editor");
}

TEST(TokenStoreTest, CreateAuthenticateRevokeExpire) {
  auto dir = testing::MakeTestDir();
  auto store = TokenStore::Open(dir / "auth.db");
  ASSERT_TRUE(store.ok()) << store.status();
  auto forever = (*store)->Create("alpha", Role::kEditor, kNow, std::nullopt);
  auto brief = (*store)->Create("*", Role::kAdmin, kNow, kNow + hours(1));
  ASSERT_TRUE(forever.ok() && brief.ok());
  auto who = (*store)->Authenticate(forever->secret, kNow + hours(1000));
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->token_id + " " + who->project + " " + std::string(RoleName(who->role)),
            forever->info.id + " alpha editor");
  std::string tampered = forever->secret;
  tampered.back() = tampered.back() == '0' ? '1' : '0';
  ASSERT_TRUE((*store)->Revoke(forever->info.id).ok());
  std::string verdicts = Verdict((*store)->Authenticate(brief->secret, kNow).status()) + " " +
                         Verdict((*store)->Authenticate(brief->secret, kNow + hours(2)).status()) +
                         " " + Verdict((*store)->Authenticate(forever->secret, kNow).status()) +
                         " " + Verdict((*store)->Authenticate(tampered, kNow).status()) + " " +
                         Verdict((*store)->Authenticate("hunter2", kNow).status()) + " " +
                         Verdict((*store)->Revoke("0000000000000000"));
  EXPECT_EQ(verdicts,
            "ok UNAUTHENTICATED UNAUTHENTICATED UNAUTHENTICATED UNAUTHENTICATED NOT_FOUND");
}

TEST(TokenStoreTest, StoresOnlyAHashAndSurvivesReopen) {
  auto dir = testing::MakeTestDir();
  std::string secret;
  {
    auto store = TokenStore::Open(dir / "auth.db");
    secret = (*store)->Create("alpha", Role::kViewer, kNow, std::nullopt)->secret;
  }
  std::string bytes = testing::ReadFileOrDie(dir / "auth.db");
  EXPECT_EQ(bytes.find(secret.substr(22)), std::string::npos);
  auto reopened = TokenStore::Open(dir / "auth.db");
  EXPECT_TRUE((*reopened)->Authenticate(secret, kNow).ok());
  EXPECT_EQ((*reopened)->List()->size(), 1u);
}

TEST(TokenStoreTest, RefusesBadProjectsAndLifetimes) {
  auto dir = testing::MakeTestDir();
  auto store = TokenStore::Open(dir / "auth.db");
  EXPECT_EQ((*store)->Create("../x", Role::kViewer, kNow, std::nullopt).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseTokenLifetime("90d")->count(), 90 * 86400);
  EXPECT_EQ(ParseTokenLifetime("12h")->count(), 12 * 3600);
  EXPECT_FALSE(ParseTokenLifetime("0d").ok());
  EXPECT_FALSE(ParseTokenLifetime("forever").ok());
}

TEST(AuditLogTest, AppendsQueriesAndSurvivesReopen) {
  auto dir = testing::MakeTestDir();
  {
    auto log = AuditLog::Open(dir / "auth.db");
    ASSERT_TRUE(log.ok()) << log.status();
    for (const char* project : {"alpha", "beta", "alpha"}) {
      ASSERT_TRUE((*log)->Append({0, kNow, "t1", project, "GET", "/v1/x", "read", 200}).ok());
    }
  }
  auto log = AuditLog::Open(dir / "auth.db");
  auto alpha = (*log)->Query({.project = "alpha"});
  auto after = (*log)->Query({.after_seq = 2});
  ASSERT_TRUE(alpha.ok() && after.ok());
  EXPECT_EQ(std::to_string(alpha->size()) + " " + std::to_string(after->size()) + " " +
                AuditEntryToJson(alpha->back()).dump(),
            "2 1 {\"access\":\"read\",\"method\":\"GET\",\"path\":\"/v1/x\",\"project\":\"alpha\","
            "\"seq\":\"3\",\"status\":200,\"time\":\"2027-01-15T08:00:00.000000Z\",\"tokenId\":"
            "\"t1\"}");
}

}  // namespace
}  // namespace trainyard::auth
