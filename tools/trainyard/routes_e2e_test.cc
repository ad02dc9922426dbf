// Every route the real server registers (GET /v1/routes) is reachable by its own method: a
// concrete path made from each pattern is routed to the route's handler, never to the server's
// "no such method" answer for unrouted requests, and no handler fails with a 5xx on it. This
// caught cpp-httplib >= 0.14 taking "customJobs/([^/:]+):logs" for a path-parameter pattern
// (src/api/route_table.h HttplibRegex): under Debian 13's 0.18 every custom method was a 404.
#include <gtest/gtest.h>
#include <httplib.h>

#include <regex>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;

// A path `pattern` (the regex subset route patterns use: literals, escapes, groups with '|',
// '?' after a group, bracket classes and '.' with '+' or '*') matches: each group takes its first
// alternative, each class or '.' the text "x1" (a negated class: "x1" holds none of '/', ':').
// The caller checks the result with std::regex_match; "" where the pattern is beyond the subset.
std::string SamplePath(const std::string& pattern, size_t& i, bool& ok) {
  std::string out;
  bool skipping = false;  // after a '|': the rest of this alternation is not taken
  while (i < pattern.size() && ok) {
    const char c = pattern[i];
    if (c == ')') break;
    if (c == '|') {
      skipping = true;
      ++i;
      continue;
    }
    std::string piece;
    if (c == '(') {
      ++i;
      piece = SamplePath(pattern, i, ok);
      if (i >= pattern.size() || pattern[i] != ')') ok = false;
      ++i;
    } else if (c == '[') {
      const size_t end = pattern.find(']', i + 2);
      if (end == std::string::npos) ok = false;
      piece = pattern[i + 1] == '^' ? "x1" : std::string(1, pattern[i + 1]);
      i = end + 1;
    } else if (c == '.') {
      piece = "x1";
      ++i;
    } else if (c == '\\' && i + 1 < pattern.size()) {
      piece = std::string(1, pattern[i + 1]);
      i += 2;
    } else {
      piece = std::string(1, c);
      ++i;
    }
    if (i < pattern.size() && (pattern[i] == '+' || pattern[i] == '*' || pattern[i] == '?')) ++i;
    if (!skipping) out += piece;
  }
  return out;
}

std::string SamplePath(const std::string& pattern) {
  size_t i = 0;
  bool ok = true;
  std::string path = SamplePath(pattern, i, ok);
  return ok && i == pattern.size() ? path : "";
}

TEST(SamplePathTest, MatchesThePatternsItWasMadeFor) {
  for (const std::string pattern :
       {"/v1/projects/([^/]+)/locations/([^/]+)/customJobs/([^/:]+):logs", "/assets/(.+)",
        "/(upload/|resumable/upload/|download/)?storage/v1/.*|/b(/.*)?", "/v2/entries:list",
        "/v1/x/(a|b)(:c)?", R"(/v1/a\.b)"}) {
    const std::string path = SamplePath(pattern);
    EXPECT_TRUE(std::regex_match(path, std::regex(pattern))) << pattern << " -> " << path;
  }
  EXPECT_EQ(SamplePath("/v1/(unclosed"), "");
}

TEST(RoutesE2ETest, EveryRegisteredRouteIsServedByItsHandler) {
  const auto dir = testing::MakeTestDir();
  std::string error;
  auto server = ServerProcess::Start(dir / "data", {"--executor", "fake", "--fake-run-ms", "100"},
                                     &error, {"TRAINYARD_BUCKET_ROOT=" + (dir / "b").string()});
  ASSERT_NE(server, nullptr) << error;
  httplib::Client c("127.0.0.1", server->port());
  auto listed = c.Get("/v1/routes");
  ASSERT_TRUE(listed && listed->status == 200) << (listed ? listed->body : "no response");
  const json routes = json::parse(listed->body)["routes"];
  ASSERT_GE(routes.size(), 40u) << routes;
  std::string failures;
  int custom_methods = 0;
  for (const auto& r : routes) {
    const std::string method = r["method"], pattern = r["pattern"];
    const std::string path = SamplePath(pattern);
    if (path.empty() || !std::regex_match(path, std::regex(pattern))) {
      failures += "no sample path for " + pattern + "\n";
      continue;
    }
    if (std::regex_search(path, std::regex(R"(/[^/]*[^/:]:[a-zA-Z]+$)"))) ++custom_methods;
    auto res = method == "POST"     ? c.Post(path, "{}", "application/json")
               : method == "DELETE" ? c.Delete(path)
               : method == "PUT"    ? c.Put(path, "{}", "application/json")
               : method == "PATCH"  ? c.Patch(path, "{}", "application/json")
                                    : c.Get(path);
    if (!res) {
      failures += method + " " + path + ": no response\n";
    } else if (res->body.find("see docs/api.md for the routes") != std::string::npos) {
      failures += method + " " + path + " (" + pattern + "): not routed\n";
    } else if (res->status >= 500) {
      failures += method + " " + path + ": " + std::to_string(res->status) + " " + res->body;
    }
  }
  EXPECT_EQ(failures, "");
  EXPECT_GE(custom_methods, 15) << "the :verb routes (:logs, :cancel, :wait, ...) were all called";
}

}  // namespace
}  // namespace trainyard::e2e
