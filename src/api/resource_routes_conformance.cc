#include "api/resource_routes_conformance.h"

#include <httplib.h>

#include <set>

namespace trainyard::api {

using nlohmann::json;

void ResourceRoutesConformanceTest::SetUp() {
  served_ = GetParam().make();
  ASSERT_NE(served_, nullptr);
}

std::pair<int, json> ResourceRoutesConformanceTest::Call(const std::string& method,
                                                         const std::string& path,
                                                         const std::string& body) {
  httplib::Client client("127.0.0.1", served_->port());
  client.set_read_timeout(30, 0);
  httplib::Result r = method == "POST"     ? client.Post(path, body, "application/json")
                      : method == "DELETE" ? client.Delete(path)
                      : method == "PATCH"  ? client.Patch(path, body, "application/json")
                                           : client.Get(path);
  if (!r) return {-1, json()};
  return {r->status, json::parse(r->body, nullptr, false)};
}

std::string ResourceRoutesConformanceTest::CollectionPath() const {
  const ResourceDescriptor& d = served_->descriptor();
  return d.prefix + "/" + served_->parent() + "/" + d.collection;
}

std::string ResourceRoutesConformanceTest::CreatePath() const {
  return CollectionPath() + served_->CreateVerb();
}

std::string ResourceRoutesConformanceTest::Create(
    const std::string& display_name, const std::map<std::string, std::string>& labels) {
  const std::string id = "r" + std::to_string(++next_id_);
  auto [status, body] = Call("POST", CreatePath(), served_->ValidBody(id, display_name, labels));
  EXPECT_EQ(status, 200) << body;
  return status == 200 ? served_->CreatedName(body) : "";
}

std::string ResourceRoutesConformanceTest::DisplayNames(const json& page) const {
  std::string out;
  for (const auto& item : page.value(served_->descriptor().ListKey(), json::array())) {
    out += (out.empty() ? "" : " ") + served_->DisplayNameOf(item);
  }
  return out;
}

namespace {

TEST_P(ResourceRoutesConformanceTest, CreateAnswersTheResourceUnderItsParentAndGetFindsIt) {
  const std::string name = Create("first");
  ASSERT_FALSE(name.empty());
  auto [status, got] = Call("GET", served_->descriptor().prefix + "/" + name);
  const std::string expected_prefix =
      served_->parent() + "/" + served_->descriptor().collection + "/";
  EXPECT_EQ(std::to_string(status) + " " + served_->DisplayNameOf(got) + " " +
                std::to_string(name.starts_with(expected_prefix)) + " " +
                std::to_string(served_->NameOf(got) == name),
            "200 first 1 1");
}

TEST_P(ResourceRoutesConformanceTest, ListWalksEveryPageNewestFirstWithoutRepeats) {
  for (const char* n : {"a", "b", "c", "d", "e"}) ASSERT_FALSE(Create(n).empty());
  std::string seen;
  std::string token;
  for (int page = 0; page < 10; ++page) {
    auto [status, body] = Call(
        "GET", CollectionPath() + "?pageSize=2" + (token.empty() ? "" : "&pageToken=" + token));
    ASSERT_EQ(status, 200) << body;
    const std::string names = DisplayNames(body);
    seen += (seen.empty() || names.empty() ? "" : " ") + names;
    token = body.value("nextPageToken", "");
    if (token.empty()) break;
  }
  EXPECT_EQ(seen, "e d c b a");
}

TEST_P(ResourceRoutesConformanceTest, ListFiltersOnLabelsAndDisplayName) {
  ASSERT_FALSE(Create("bert", {{"team", "nlp"}}).empty());
  ASSERT_FALSE(Create("resnet", {{"team", "cv"}}).empty());
  ASSERT_FALSE(Create("gpt", {{"team", "nlp"}}).empty());
  auto [s1, nlp] =
      Call("GET",
           CollectionPath() + "?filter=" + httplib::detail::encode_query_param("labels.team=nlp"));
  auto [s2, named] = Call("GET", CollectionPath() + "?filter=" +
                                     httplib::detail::encode_query_param("display_name:\"res*\""));
  auto [s3, bad] = Call("GET", CollectionPath() + "?filter=colour%3Dred");
  EXPECT_EQ(std::to_string(s1) + " " + DisplayNames(nlp) + " | " + std::to_string(s2) + " " +
                DisplayNames(named) + " | " + std::to_string(s3) + " " +
                bad["error"].value("status", ""),
            "200 gpt bert | 200 resnet | 400 INVALID_ARGUMENT");
}

TEST_P(ResourceRoutesConformanceTest,
       AnInvalidCreateIs400WithTheFieldInFieldViolationsAndStoresNothing) {
  std::string field;
  const std::string body = served_->InvalidBody(&field);
  auto [status, error] = Call("POST", CreatePath(), body);
  auto [list_status, list] = Call("GET", CollectionPath());
  const json details = error["error"].value("details", json::array());
  const json violation = details.empty() ? json() : details[0]["fieldViolations"][0];
  EXPECT_EQ(std::to_string(status) + " " + error["error"].value("status", "") + " " +
                (details.empty() ? "-" : details[0].value("@type", "")) + " " +
                (violation.is_object() ? violation.value("field", "") : "-") + " " +
                std::to_string(list.value(served_->descriptor().ListKey(), json::array()).size()),
            "400 INVALID_ARGUMENT type.googleapis.com/google.rpc.BadRequest " + field + " 0");
}

TEST_P(ResourceRoutesConformanceTest, HostileRequestsAreClear4xx) {
  const std::string c = CollectionPath();
  const std::string post = "POST " + CreatePath();
  std::vector<std::pair<std::string, std::string>> cases = {
      {post, ""},                                       // empty body
      {post, "{\"displayName\": \"x\""},                // truncated JSON
      {post, "\"just a string\""},                      // not an object
      {post, std::string(5000, '[')},                   // deep nesting
      {post, "{\"displayName\": \"\xff\xfe\"}"},        // not UTF-8
      {"GET " + c + "?colour=red", ""},                 // unknown parameter
      {"GET " + c + "?pageSize=-1", ""},                // bad page size
      {"GET " + c + "?pageToken=bm90LWEtdG9rZW4", ""},  // forged token
      {"GET " + c + "/no-such-id", ""},                 // unknown id
      {"GET " + c + "/..", ""},                         // dot segment
      {"DELETE " + c + "/no-such-id", ""},
  };
  std::string codes;
  for (const auto& [what, body] : cases) {
    const size_t space = what.find(' ');
    auto [status, answer] = Call(what.substr(0, space), what.substr(space + 1), body);
    const bool clear = status >= 400 && status < 500;
    codes += clear ? "4" : ("[" + what + " -> " + std::to_string(status) + "]");
  }
  auto [after, list] = Call("GET", CollectionPath());
  EXPECT_EQ(codes + " " + std::to_string(after) + " " +
                std::to_string(list.value(served_->descriptor().ListKey(), json::array()).size()),
            "44444444444 200 0");
}

TEST_P(ResourceRoutesConformanceTest, DeleteIsAStoredOperationServedUnderV1AndUi) {
  const std::string name = Create("to_delete");
  ASSERT_FALSE(name.empty());
  const std::string prefix = served_->descriptor().prefix;
  if (!served_->Deletable()) {
    ASSERT_TRUE(served_->End(name).ok());
    auto [status, error] = Call("DELETE", prefix + "/" + name);
    auto [s_get, got] = Call("GET", prefix + "/" + name);
    EXPECT_EQ(std::to_string(status) + " " + std::to_string(s_get), "404 200");
    return;
  }
  int refused = 0;
  if (served_->StartsUnended()) {
    auto [status, error] = Call("DELETE", prefix + "/" + name);
    refused = status;
  }
  ASSERT_TRUE(served_->End(name).ok());
  auto [status, op] = Call("DELETE", prefix + "/" + name);
  ASSERT_EQ(status, 200) << op;
  const std::string op_name = op.value("name", "");
  auto [s_v1, polled] = Call("GET", "/v1/" + op_name);
  auto [s_ui, polled_ui] = Call("GET", "/ui/" + op_name);
  auto [s_gone, gone] = Call("GET", prefix + "/" + name);
  EXPECT_EQ(std::to_string(refused) + " " + op.value("done", json(false)).dump() + " " +
                op["metadata"].value("@type", "") + " " + op["response"].value("@type", "") + " " +
                std::to_string(op_name.starts_with(served_->parent() + "/operations/")) + " | " +
                std::to_string(s_v1) + " " + std::to_string(polled == op) + " | " +
                std::to_string(s_ui) + " " + std::to_string(polled_ui == op) + " | " +
                std::to_string(s_gone),
            std::string(served_->StartsUnended() ? "400" : "0") + " true " +
                served_->descriptor().delete_metadata_type +
                " type.googleapis.com/google.protobuf.Empty 1 | 200 1 | 200 1 | 404");
}

TEST_P(ResourceRoutesConformanceTest, CancelOfAnEndedResourceFollowsTheApisPromise) {
  if (!served_->StartsUnended()) GTEST_SKIP() << "this resource has no cancel";
  const std::string name = Create("to_cancel");
  ASSERT_FALSE(name.empty());
  const std::string path = served_->descriptor().prefix + "/" + name + ":cancel";
  auto [first, body] = Call("POST", path, "{}");
  ASSERT_TRUE(served_->End(name).ok());
  auto [again, answer] = Call("POST", path, "{}");
  auto [bad_body, refused] = Call("POST", path, "[1]");
  EXPECT_EQ(std::to_string(first) + " " + body.dump() + " " + std::to_string(again) + " " +
                std::to_string(bad_body),
            std::string("200 {} ") + (served_->descriptor().cancel_of_ended_is_ok ? "200" : "400") +
                " 400");
}

TEST_P(ResourceRoutesConformanceTest, TheRoutesAreInTheRouteTableWithTheirAccess) {
  auto [status, routes] = Call("GET", "/v1/routes");
  ASSERT_EQ(status, 200) << routes;
  const ResourceDescriptor& d = served_->descriptor();
  const std::string create = served_->CreateVerb();
  std::set<std::string> seen;
  for (const auto& r : routes.value("routes", json::array())) {
    const std::string pattern = r.value("pattern", "");
    const size_t at = pattern.find("/" + d.collection);
    if (at == std::string::npos || !pattern.starts_with(d.prefix + "/")) continue;
    const std::string tail = pattern.substr(at + 1 + d.collection.size());
    // The layer's methods only (a resource may add its own, as customJobs' :logs).
    if (!tail.empty() && tail != create && tail != "/([^/:]+)" && tail != "/([^/:]+):cancel") {
      continue;
    }
    seen.insert(r.value("method", "") + " " + (tail.empty() ? "collection" : tail) + " " +
                r.value("access", ""));
  }
  const std::string read(auth::AccessName(d.read)), write(auth::AccessName(d.write));
  std::set<std::string> expected = {
      "GET /([^/:]+) " + read, "GET collection " + read,
      "POST " + (create.empty() ? "collection" : create) + " " + write};
  if (served_->Deletable()) expected.insert("DELETE /([^/:]+) " + write);
  if (served_->Patchable()) expected.insert("PATCH /([^/:]+) " + write);
  if (served_->StartsUnended()) expected.insert("POST /([^/:]+):cancel " + write);
  std::string listed, wanted;
  for (const auto& s : seen) listed += s + "; ";
  for (const auto& s : expected) wanted += s + "; ";
  EXPECT_EQ(listed, wanted);
}

}  // namespace
}  // namespace trainyard::api
