// The token API's JSON (token_json.h): what a token shows (never its secret), and the create and
// update bodies with their errors.
#include "auth/token_json.h"

#include <gtest/gtest.h>

#include "common/time.h"

namespace trainyard::auth {
namespace {

using nlohmann::json;

const TimePoint kJsonNow = TimePoint(std::chrono::seconds(1'800'000'000));

TEST(TokenJsonTest, ShowsEverythingButTheSecret) {
  TokenInfo t{"0123456789abcdef",
              "alpha",
              Role::kAdmin,
              "CI",
              "ana@example.com",
              kJsonNow,
              kJsonNow + std::chrono::hours(1),
              std::nullopt,
              false};
  EXPECT_EQ(TokenToJson(t, kJsonNow).dump() + "\n" +
                TokenToJson(t, kJsonNow + std::chrono::hours(1))["state"].get<std::string>(),
            R"({"createTime":"2027-01-15T08:00:00.000000Z","description":"CI",)"
            R"("expireTime":"2027-01-15T09:00:00.000000Z","id":"0123456789abcdef",)"
            R"("owner":"ana@example.com","project":"alpha","role":"admin","state":"ACTIVE"})"
            "\nEXPIRED");
}

TEST(TokenJsonTest, ReadsCreateAndUpdateRequests) {
  auto spec = ParseCreateTokenRequest(
      json::parse(R"({"project":"*","role":"editor","owner":"ops","ttl":"3600s"})"), kJsonNow);
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto at =
      ParseUpdateTokenRequest(json::parse(R"({"expireTime":"2027-01-16T08:00:00Z"})"), kJsonNow);
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(spec->project + " " + std::string(RoleName(spec->role)) + " " + spec->owner + " " +
                FormatTimestamp(*spec->expire_time) + " " + FormatTimestamp(*at),
            "* editor ops 2027-01-15T09:00:00.000000Z 2027-01-16T08:00:00.000000Z");
}

TEST(TokenJsonTest, NamesTheFieldOfEveryError) {
  std::string errors;
  for (const char* body : {R"({"role":"viewer"})", R"({"project":"p","role":"owner"})",
                           R"({"project":"p","role":"viewer","secret":"x"})",
                           R"({"project":"p","role":"viewer","ttl":"1s","expireTime":"x"})"}) {
    errors += ParseCreateTokenRequest(json::parse(body), kJsonNow).status().message() + "\n";
  }
  errors += ParseUpdateTokenRequest(json::object(), kJsonNow).status().message() + "\n";
  EXPECT_EQ(errors,
            "project: required; a project id, or \"*\" for every project\n"
            "Invalid value at 'role' (TYPE_STRING), \"owner\": expected viewer, editor or admin\n"
            "Invalid JSON payload received. Unknown name \"secret\" at '': Cannot find field.\n"
            "ttl: give expireTime or ttl, not both\n"
            "expireTime: required: the new expiry, as expireTime (RFC 3339) or ttl (\"2592000s\", "
            "from now)\n");
}

}  // namespace
}  // namespace trainyard::auth
