// The token API (auth_routes.h) on a real HTTP server: admins of "*" manage every token, admins
// of a project only that project's, editors and viewers none; lists never show secrets; a revoked
// or expired token is refused at once, naming its id; every call is audited.
#include "api/auth_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "testing/test_util.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

const auth::TimePoint kStart = auth::TimePoint(std::chrono::seconds(1'800'000'000));

class AuthRoutesTest : public ::testing::Test {
 protected:
  void Start(bool with_auth = true) {
    auto dir = testing::MakeTestDir();
    tokens_ = std::move(*auth::TokenStore::Open(dir / "auth.db"));
    audit_ = std::move(*auth::AuditLog::Open(dir / "auth.db"));
    AuthOptions options{with_auth ? tokens_.get() : nullptr, audit_.get(), [this] { return now_; }};
    routes_ = std::make_unique<RouteTable>(server_, options);
    RegisterAuthRoutes(*routes_, options);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string Token(const std::string& project, auth::Role role) {
    return tokens_->Create(project, role, kStart, std::nullopt)->secret;
  }
  static std::string IdOf(const std::string& secret) { return secret.substr(4, 16); }

  struct Answer {
    int status = -1;
    json body;
  };
  Answer Call(const std::string& method, const std::string& path, const std::string& token,
              const std::string& body = "") {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    auto r = method == "POST"     ? c.Post(path, body, "application/json")
             : method == "PATCH"  ? c.Patch(path, body, "application/json")
             : method == "DELETE" ? c.Delete(path)
                                  : c.Get(path);
    if (!r) return {};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  // "STATUS" or "STATUS message" for an error.
  static std::string Verdict(const Answer& a) {
    std::string out = std::to_string(a.status);
    if (a.body.contains("error")) out += " " + a.body["error"].value("message", "");
    return out;
  }

  auth::TimePoint now_ = kStart;
  httplib::Server server_;
  std::unique_ptr<auth::TokenStore> tokens_;
  std::unique_ptr<auth::AuditLog> audit_;
  std::unique_ptr<RouteTable> routes_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(AuthRoutesTest, AdminCreatesListsGetsAndRevokesWithoutEverListingSecrets) {
  Start();
  const std::string root = Token("*", auth::Role::kAdmin);
  auto made = Call("POST", "/trainyard/v1/tokens", root,
                   R"({"project":"alpha","role":"editor","description":"CI","owner":"ana",)"
                   R"("ttl":"3600s"})");
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string secret = made.body["secret"], id = made.body["id"];
  EXPECT_EQ(Call("GET", "/v1/none", secret).status, 404) << "the new token authenticates";
  auto listed = Call("GET", "/trainyard/v1/tokens?project=alpha", root);
  auto got = Call("GET", "/trainyard/v1/tokens/" + id, root);
  ASSERT_EQ(listed.status, 200) << listed.body;
  const std::string everything = listed.body.dump() + got.body.dump();
  EXPECT_EQ(everything.find(secret.substr(22)), std::string::npos) << everything;
  EXPECT_EQ(everything.find("secret"), std::string::npos) << everything;
  json shown = got.body;
  shown.erase("id");
  EXPECT_EQ(std::to_string(listed.body["tokens"].size()) + " " + shown.dump(),
            R"(1 {"createTime":"2027-01-15T08:00:00.000000Z","description":"CI",)"
            R"("expireTime":"2027-01-15T09:00:00.000000Z","owner":"ana","project":"alpha",)"
            R"("role":"editor","state":"ACTIVE"})");
  auto revoked = Call("DELETE", "/trainyard/v1/tokens/" + id, root);
  EXPECT_EQ(Verdict(revoked) + " " + revoked.body.value("state", ""), "200 REVOKED");
  EXPECT_EQ(Verdict(Call("GET", "/trainyard/v1/tokens", secret)),
            "401 Request had invalid authentication credentials (token " + id +
                " was revoked). Expected an access token from `trainyard auth create-token`; see "
                "docs/security.md.");
}

TEST_F(AuthRoutesTest, EditorsAndViewersAreRefused) {
  Start();
  const std::string target = IdOf(Token("alpha", auth::Role::kViewer));
  std::string verdicts;
  for (auth::Role role : {auth::Role::kEditor, auth::Role::kViewer}) {
    const std::string token = Token("*", role);
    for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
             {"POST", "/trainyard/v1/tokens"},
             {"GET", "/trainyard/v1/tokens"},
             {"GET", "/trainyard/v1/tokens/" + target},
             {"PATCH", "/trainyard/v1/tokens/" + target},
             {"DELETE", "/trainyard/v1/tokens/" + target}}) {
      verdicts += std::to_string(Call(method, path, token, R"({"ttl":"60s"})").status) + " ";
    }
  }
  EXPECT_EQ(verdicts, "403 403 403 403 403 403 403 403 403 403 ");
}

TEST_F(AuthRoutesTest, AProjectAdminManagesOnlyItsProjectsTokens) {
  Start();
  const std::string admin = Token("alpha", auth::Role::kAdmin);
  const std::string beta = IdOf(Token("beta", auth::Role::kViewer));
  const std::string mine = IdOf(Token("alpha", auth::Role::kViewer));
  auto create = [&](const std::string& project) {
    return Call("POST", "/trainyard/v1/tokens", admin,
                R"({"role":"admin","project":")" + project + R"("})")
        .status;
  };
  auto listed = Call("GET", "/trainyard/v1/tokens", admin);
  std::string projects;
  for (const auto& t : listed.body["tokens"]) projects += t["project"].get<std::string>() + " ";
  EXPECT_EQ(std::to_string(create("alpha")) + " " + std::to_string(create("beta")) + " " +
                std::to_string(create("*")) + " | " + projects + "| " +
                std::to_string(Call("GET", "/trainyard/v1/tokens?project=beta", admin).status) +
                " " + std::to_string(Call("GET", "/trainyard/v1/tokens/" + beta, admin).status) +
                " " + std::to_string(Call("DELETE", "/trainyard/v1/tokens/" + beta, admin).status) +
                " " + std::to_string(Call("DELETE", "/trainyard/v1/tokens/" + mine, admin).status),
            "200 403 403 | alpha alpha | 403 403 403 200");
  EXPECT_EQ(Verdict(Call("GET", "/trainyard/v1/tokens/" + beta, admin)),
            "403 token " + IdOf(admin) +
                " (role admin on project alpha) has no access to project "
                "beta");
}

TEST_F(AuthRoutesTest, AnExpiredTokenIsRefusedByIdUntilItsExpiryIsExtended) {
  Start();
  const std::string root = Token("*", auth::Role::kAdmin);
  auto made = Call("POST", "/trainyard/v1/tokens", root,
                   R"({"project":"alpha","role":"admin","ttl":"3600s"})");
  const std::string secret = made.body.value("secret", ""), id = made.body.value("id", "");
  now_ = kStart + std::chrono::hours(2);
  const std::string expired = Verdict(Call("GET", "/trainyard/v1/tokens", secret));
  auto past =
      Call("PATCH", "/trainyard/v1/tokens/" + id, root, R"({"expireTime":"2027-01-15T09:00:00Z"})");
  auto extended = Call("PATCH", "/trainyard/v1/tokens/" + id, root, R"({"ttl":"86400s"})");
  EXPECT_EQ(expired + "\n" + Verdict(past) + "\n" + Verdict(extended) + " " +
                extended.body.value("expireTime", "") + " " +
                std::to_string(Call("GET", "/trainyard/v1/tokens", secret).status),
            "401 Request had invalid authentication credentials (token " + id +
                " has expired). Expected an access token from `trainyard auth create-token`; see "
                "docs/security.md.\n"
                "400 expireTime: 2027-01-15T09:00:00.000000Z is not in the future; to stop a "
                "token now, revoke it\n"
                "200 2027-01-16T10:00:00.000000Z 200");
}

TEST_F(AuthRoutesTest, EveryCallIsAuditedWithItsToken) {
  Start();
  const std::string root = Token("*", auth::Role::kAdmin);
  const std::string viewer = Token("alpha", auth::Role::kViewer);
  auto made = Call("POST", "/trainyard/v1/tokens", root, R"({"project":"alpha","role":"viewer"})");
  Call("GET", "/trainyard/v1/tokens", viewer);
  Call("PATCH", "/trainyard/v1/tokens/" + IdOf(viewer), root, R"({"ttl":"60s"})");
  Call("DELETE", "/trainyard/v1/tokens/" + IdOf(viewer), root);
  auto entries = audit_->Query({});
  ASSERT_TRUE(entries.ok()) << entries.status();
  std::string seen;
  for (const auto& e : *entries) {
    seen += e.method + " " + e.path.substr(0, 21) + " " +
            (e.token_id == IdOf(root)     ? "root"
             : e.token_id == IdOf(viewer) ? "viewer"
                                          : "?") +
            " " + std::to_string(e.http_status) + " project=" + e.project +
            (e.resource.empty() ? "" : " made " + e.resource) + "\n";
  }
  EXPECT_EQ(seen, "POST /trainyard/v1/tokens root 200 project=alpha made tokens/" +
                      made.body.value("id", "") +
                      "\n"
                      "GET /trainyard/v1/tokens viewer 403 project=\n"
                      "PATCH /trainyard/v1/tokens/ root 200 project=alpha\n"
                      "DELETE /trainyard/v1/tokens/ root 200 project=alpha\n");
}

TEST_F(AuthRoutesTest, AServerWithoutAuthenticationManagesNoTokens) {
  Start(/*with_auth=*/false);
  auto r = Call("POST", "/trainyard/v1/tokens", "", R"({"project":"alpha","role":"viewer"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"].value("status", ""), "FAILED_PRECONDITION") << r.body;
}

}  // namespace
}  // namespace trainyard::api
