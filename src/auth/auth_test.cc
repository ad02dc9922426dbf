#include <gtest/gtest.h>

#include <map>

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
  auto refused = [&](TokenSpec spec) { return (*store)->Create(spec, kNow).status().message(); };
  EXPECT_EQ(refused({"../x", Role::kViewer}),
            "project: '../x' is not a project id (a-z, 0-9, '-', starting with a letter, at most "
            "30) nor '*' (every project)");
  EXPECT_EQ(refused({"p", Role::kViewer, "line\nbreak"}),
            "description: control characters (newlines, tabs, ...) are not allowed");
  EXPECT_EQ(refused({"p", Role::kViewer, "", std::string(257, 'o')}),
            "owner: at most 256 bytes (got 257)");
  EXPECT_EQ(refused({"p", Role::kViewer, "", "", kNow}),
            "expireTime: 2027-01-15T08:00:00.000000Z is not in the future");
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

TEST(TokenStoreTest, KeepsDescriptionOwnerAndLastUseToTheMinute) {
  auto dir = testing::MakeTestDir();
  auto store = TokenStore::Open(dir / "auth.db");
  auto made = (*store)->Create({"alpha", Role::kEditor, "CI of team nlp", "ana@example.com"}, kNow);
  ASSERT_TRUE(made.ok()) << made.status();
  auto used = [&](TimePoint at) {
    EXPECT_TRUE((*store)->Authenticate(made->secret, at).ok());
    auto t = (*store)->Get(made->info.id);
    return t->last_use_time ? std::to_string((*t->last_use_time - kNow) / std::chrono::seconds(1))
                            : std::string("never");
  };
  auto before = (*store)->Get(made->info.id);
  ASSERT_TRUE(before.ok()) << before.status();
  // In order: the first use is written, one 59 s later is not, one a minute later is.
  std::string uses = used(kNow + hours(1));
  uses += " " + used(kNow + hours(1) + std::chrono::seconds(59));
  uses += " " + used(kNow + hours(1) + std::chrono::seconds(60));
  EXPECT_EQ(before->description + " / " + before->owner + " / " +
                (before->last_use_time ? "used" : "never") + " / " + uses,
            "CI of team nlp / ana@example.com / never / 3600 3600 3660");
  EXPECT_EQ((*store)->Get("0000000000000000").status().code(), StatusCode::kNotFound);
}

TEST(TokenStoreTest, ListsAProjectNewestFirstInPages) {
  auto dir = testing::MakeTestDir();
  auto store = TokenStore::Open(dir / "auth.db");
  std::map<std::string, std::string> names;  // id -> "<project><n>"
  for (int i = 0; i < 5; ++i) {
    const std::string project = i % 2 == 0 ? "alpha" : "beta";
    // alpha2 and alpha4 share a create time (then id order): a page boundary falls between them.
    auto t = (*store)->Create(project, Role::kViewer, kNow + hours(i == 4 ? 2 : i), std::nullopt);
    names[t->info.id] = project + std::to_string(i);
  }
  std::string pages, tied;
  for (const auto& [id, name] : names) {
    if (name == "alpha2" || name == "alpha4") tied += name + " | ";  // in id order
  }
  TokenQuery q{"alpha", 1, ""};
  do {
    auto page = (*store)->List(q);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const auto& t : page->tokens) pages += names[t.id] + " ";
    pages += "| ";
    q.page_token = page->next_page_token;
  } while (!q.page_token.empty());
  auto all = (*store)->List(TokenQuery{"", 10, ""});
  EXPECT_EQ(pages + std::to_string(all->tokens.size()) + " " +
                (*store)->List(TokenQuery{"", 1, "nonsense"}).status().message(),
            tied + "alpha0 | 5 pageToken: 'nonsense' is not a nextPageToken of this list");
}

TEST(TokenStoreTest, SetExpireTimeExtendsAndRevivesButNeverUnrevokes) {
  auto dir = testing::MakeTestDir();
  auto store = TokenStore::Open(dir / "auth.db");
  auto brief = (*store)->Create("alpha", Role::kViewer, kNow, kNow + hours(1));
  auto revoked = (*store)->Create("alpha", Role::kViewer, kNow, kNow + hours(1));
  ASSERT_TRUE((*store)->Revoke(revoked->info.id).ok());
  const TimePoint later = kNow + hours(2);  // both have expired
  auto extended = (*store)->SetExpireTime(brief->info.id, later + hours(24), later);
  ASSERT_TRUE(extended.ok()) << extended.status();
  ASSERT_TRUE((*store)->SetExpireTime(revoked->info.id, later + hours(24), later).ok());
  EXPECT_EQ(
      std::string(TokenStateName(StateAt(*extended, later))) + " " +
          Verdict((*store)->Authenticate(brief->secret, later).status()) + " " +
          Verdict((*store)->Authenticate(revoked->secret, later).status()) + " " +
          Verdict((*store)->SetExpireTime(brief->info.id, later, later).status()) + " " +
          Verdict((*store)->SetExpireTime("0000000000000000", later + hours(1), later).status()),
      "ACTIVE ok UNAUTHENTICATED INVALID_ARGUMENT NOT_FOUND");
  EXPECT_EQ((*store)->Authenticate(revoked->secret, later).status().message(),
            "Request had invalid authentication credentials (token " + revoked->info.id +
                " was revoked). Expected an access token from `trainyard auth create-token`; see "
                "docs/security.md.");
}

}  // namespace
}  // namespace trainyard::auth
