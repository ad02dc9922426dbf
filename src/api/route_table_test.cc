#include "api/route_table.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <regex>
#include <thread>
#include <vector>

#include "testing/test_util.h"

namespace trainyard::api {
namespace {

using auth::Access;

const auth::TimePoint kNow = auth::TimePoint(std::chrono::seconds(1'800'000'000));

class RouteTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::MakeTestDir();
    tokens_ = std::move(*auth::TokenStore::Open(dir / "auth.db"));
    audit_ = std::move(*auth::AuditLog::Open(dir / "auth.db"));
    routes_ = std::make_unique<RouteTable>(
        server_, AuthOptions{tokens_.get(), audit_.get(), [] { return kNow; }});
    auto ok = [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{}", "application/json");
    };
    routes_->Get("/healthz", Access::kPublic, ok);
    routes_->Get("/v1/projects/([^/]+)/things", Access::kRead, ok);
    routes_->Post("/v1/projects/([^/]+)/things", Access::kWrite, ok);
    routes_->Get("/v1/global", Access::kAdmin, ok);
    routes_->Get("/metrics", Access::kRead, ok);
    // A create: answers who called, and reports what it made.
    routes_->Post("/v1/projects/([^/]+)/made", Access::kWrite,
                  [this](const httplib::Request&, httplib::Response& res) {
                    RequestContext* context = routes_->CurrentContext();
                    context->created = "projects/alpha/made/1";
                    res.set_content(context->caller ? context->caller->token_id : "nobody",
                                    "text/plain");
                  });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }

  std::string Token(const std::string& project, auth::Role role) {
    return tokens_->Create(project, role, kNow, kNow + std::chrono::hours(1))->secret;
  }

  int Call(const std::string& method, const std::string& path, const std::string& token) {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    auto r = method == "POST" ? c.Post(path, "{}", "application/json") : c.Get(path);
    return r ? r->status : -1;
  }

  httplib::Server server_;
  std::unique_ptr<auth::TokenStore> tokens_;
  std::unique_ptr<auth::AuditLog> audit_;
  std::unique_ptr<RouteTable> routes_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(RouteTableTest, ChecksTokenRoleAndProjectOnEveryDeclaredRoute) {
  const std::string viewer = Token("alpha", auth::Role::kViewer);
  const std::string editor = Token("alpha", auth::Role::kEditor);
  const std::string ops = Token("*", auth::Role::kAdmin);
  std::string got;
  for (const std::string& token : {std::string(), viewer, editor, ops}) {
    got += std::to_string(Call("GET", "/healthz", token)) + " " +
           std::to_string(Call("GET", "/v1/projects/alpha/things", token)) + " " +
           std::to_string(Call("GET", "/v1/projects/beta/things", token)) + " " +
           std::to_string(Call("POST", "/v1/projects/alpha/things", token)) + " " +
           std::to_string(Call("GET", "/v1/global", token)) + "\n";
  }
  EXPECT_EQ(got,
            "200 401 401 401 401\n"
            "200 200 403 403 403\n"
            "200 200 403 200 403\n"
            "200 200 200 200 200\n");
  EXPECT_EQ(routes_->routes().size(), 6u);
}

TEST_F(RouteTableTest, AuditsEveryNonPublicRequestWithItsResult) {
  const std::string viewer = Token("alpha", auth::Role::kViewer);
  Call("GET", "/healthz", "");
  Call("GET", "/v1/projects/alpha/things", viewer);
  Call("POST", "/v1/projects/alpha/things", viewer);
  Call("GET", "/v1/projects/alpha/things", "Bearer-less garbage");
  Call("GET", "/metrics", viewer);  // a served scrape: not recorded
  Call("GET", "/metrics", "");      // a refused one is
  std::string rows;
  auto entries = audit_->Query({});  // held: a range-for over *Query() would dangle
  ASSERT_TRUE(entries.ok()) << entries.status();
  for (const auto& e : *entries) {
    rows += e.method + " " + e.project + " " + e.access + " " + std::to_string(e.http_status) +
            " " + (e.token_id == "-" ? "-" : "token") + "\n";
  }
  EXPECT_EQ(rows,
            "GET alpha read 200 token\nPOST alpha write 403 token\nGET alpha read 401 -\n"
            "GET  read 401 -\n");
}

// Where from, with which client and what it made; a revoked token's row (and its 401) names it.
TEST_F(RouteTableTest, AuditsClientAddressUserAgentCreatedResourceAndRevokedTokens) {
  const std::string editor = Token("alpha", auth::Role::kEditor);
  const std::string revoked = Token("alpha", auth::Role::kEditor);
  const std::string revoked_id = revoked.substr(4, 16);
  ASSERT_TRUE(tokens_->Revoke(revoked_id).ok());
  httplib::Client c("127.0.0.1", port_);
  c.set_default_headers({{"User-Agent", "trainyard-cli/test"}});
  c.set_bearer_token_auth(editor);
  auto made = c.Post("/v1/projects/alpha/made", "{}", "application/json");
  c.set_bearer_token_auth(revoked);
  auto refused = c.Post("/v1/projects/alpha/made", "{}", "application/json");
  ASSERT_TRUE(made && refused);
  auto entries = audit_->Query({});
  ASSERT_TRUE(entries.ok()) << entries.status();
  std::string rows;
  for (const auto& e : *entries) {
    rows += std::to_string(e.http_status) + " " +
            (e.token_id == revoked_id ? "revoked" : "editor") + " " + e.remote_addr + " " +
            e.user_agent + " [" + e.resource + "]\n";
  }
  EXPECT_EQ(made->body, editor.substr(4, 16)) << "the handler sees its caller";
  EXPECT_NE(refused->body.find("token " + revoked_id + " was revoked"), std::string::npos)
      << refused->body;
  EXPECT_EQ(rows,
            "200 editor 127.0.0.1 trainyard-cli/test [projects/alpha/made/1]\n"
            "401 revoked 127.0.0.1 trainyard-cli/test []\n");
}

TEST(ProjectOfPathTest, OnlyProjectAndLocationPaths) {
  std::string got;
  for (const char* path :
       {"/v1/projects/p1/locations/l/customJobs", "/v1/projects/p1", "/healthz", "/v1/projectsX/p",
        "/ui/projects/p2/locations/local/operations/1", "/storage/v1/b/projects/o",
        "/v1/projects/p1/locations/us-east1/customJobs/7:cancel", "/v1/projects/p1/jobs/j1",
        "/storage/v1/b/locations/o"}) {
    got += ProjectOfPath(path) + "|" + LocationOfPath(path) + " ";
  }
  EXPECT_EQ(got, "p1|l p1| | | p2|local | p1|us-east1 p1| | ");
}

TEST(HttplibRegexTest, NoPathParameterLookalikeAndTheSameMatches) {
  const std::vector<std::string> paths = {"/v1/j/abc:logs", "/v1/j/abc", "/v1/j/a/b:logs",
                                          "/v1/j/:logs",    "/v1/x/:id", "/v1/j/abc:cancel",
                                          "/v1/j/a]b:logs", "/v1/j/a:b"};
  for (const std::string& pattern :
       {std::string("/v1/j/([^/:]+):logs"), std::string("/v1/j/([^/:]+)"), std::string("/v1/x/:id"),
        std::string("/v1/j/([]/:]+)"), std::string(R"(/v1/j/\/:x)"),
        std::string("/v1/(j|x)/([^/:]+)(:logs|:cancel)?")}) {
    const std::string rewritten = HttplibRegex(pattern);
    EXPECT_EQ(rewritten.find("/:"), std::string::npos) << pattern << " -> " << rewritten;
    for (const std::string& path : paths) {
      EXPECT_EQ(std::regex_match(path, std::regex(pattern)),
                std::regex_match(path, std::regex(rewritten)))
          << pattern << " -> " << rewritten << " on " << path;
    }
  }
}

// "<status> <body>" of GET `path` on a server whose one route is `pattern` (no auth), answered by
// `handler`.
std::string GetFromOneRoute(const std::string& pattern, Handler handler, const std::string& path) {
  httplib::Server server;
  RouteTable routes(server, AuthOptions{});
  routes.Get(pattern, Access::kRead, std::move(handler));
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get(path);
  server.stop();
  t.join();
  return r ? std::to_string(r->status) + " " + r->body : "no response";
}

// A custom method after an id whose class excludes ':' (every resource's item pattern): served
// whatever cpp-httplib version routes it (0.18 read "/:" as a path parameter and 404ed it).
TEST(RouteTableRoutingTest, ServesCustomMethodsAfterAnIdClassWithoutColons) {
  EXPECT_EQ(GetFromOneRoute(
                "/v1/projects/([^/]+)/customJobs/([^/:]+):logs",
                [](const httplib::Request& req, httplib::Response& res) {
                  res.set_content(req.matches[2].str(), "text/plain");
                },
                "/v1/projects/p/customJobs/123:logs"),
            "200 123");
}

// An unencoded '=' inside a value reaches the handler whole (docs/api.md's own
// `operations?filter=state=DONE`).
TEST(RouteTableRoutingTest, HandlersSeeValuesWithAnUnencodedEquals) {
  EXPECT_EQ(GetFromOneRoute(
                "/v1/filtered",
                [](const httplib::Request& req, httplib::Response& res) {
                  res.set_content(req.get_param_value("filter"), "text/plain");
                },
                "/v1/filtered?filter=state=DONE"),
            "200 state=DONE");
}

TEST(SplitQueryTest, SplitsEachParameterAtItsFirstEquals) {
  std::string got;
  for (const auto& [k, v] : SplitQuery("/v1/x?filter=state=JOB_STATE_SUCCEEDED&a=%3D+b&flag&c=")) {
    got += k + "=[" + v + "] ";
  }
  EXPECT_EQ(got, "a=[= b] c=[] filter=[state=JOB_STATE_SUCCEEDED] flag=[] ");
  EXPECT_TRUE(SplitQuery("/v1/x").empty());
}

}  // namespace
}  // namespace trainyard::api
