#include "output_format.h"

#include <gtest/gtest.h>

namespace trainyard::cli {
namespace {

using nlohmann::json;

const std::vector<json> kItems = {
    json::parse(R"({"name":"projects/p/jobs/a1","state":"RUNNING","trainingInput":{"region":"eu",
      "args":["x","y"]},"trials":[{"trialId":"1"}]})"),
    json::parse(R"({"name":"projects/p/jobs/b2","state":"QUEUED","labels":{"k":"v"}})")};

std::string Format(const std::string& format, bool as_list = true) {
  auto out = FormatResources(kItems, format, as_list);
  return out.ok() ? *out : out.status().message();
}

TEST(OutputFormatTest, ValueAndTableProjections) {
  EXPECT_EQ(Format("value(name.basename(), state, trainingInput.region, trials[0].trialId)"),
            "a1\tRUNNING\teu\t1\nb2\tQUEUED\t\t\n");
  EXPECT_EQ(Format("table(name.basename():label=JOB_ID, state:label=STATUS, trainingInput.args, "
                   "trainingInput.args.len())"),
            "JOB_ID  STATUS   ARGS       ARGS\n"
            "a1      RUNNING  [\"x\",\"y\"]  2\n"
            "b2      QUEUED\n");
}

TEST(OutputFormatTest, PlainTableJsonAndYaml) {
  EXPECT_EQ(Format("table"),
            "ID  DISPLAY_NAME  STATE    CREATE_TIME\na1                RUNNING\n"
            "b2                QUEUED\n");
  EXPECT_EQ(Format("json", false).substr(0, 1) + Format("json", true).substr(0, 1), "[[");
  EXPECT_EQ(FormatResources({kItems[1]}, "yaml", false).value_or(""),
            "labels:\n  k: v\nname: projects/p/jobs/b2\nstate: QUEUED\n");
}

TEST(OutputFormatTest, BadFormatsNameTheFlagAndTheProblem) {
  std::string out;
  for (const char* f :
       {"xml", "value(", "value()", "value(a..b)", "value(a:colour=red)", "csv(a)"}) {
    const std::string m = CheckFormat(f).message();
    out += std::string(f) + " -> " + m.substr(0, m.find("; use json")) + "\n";
  }
  EXPECT_EQ(out,
            "xml -> --format: 'xml' is not supported\n"
            "value( -> --format: 'value(' is not supported: missing ')'\n"
            "value() -> --format: 'value()' is not supported: no keys\n"
            "value(a..b) -> --format: 'value(a..b)' is not supported: empty field in key 'a..b'\n"
            "value(a:colour=red) -> --format: 'value(a:colour=red)' is not supported: unknown "
            "attribute 'colour=red' (only label=TEXT)\n"
            "csv(a) -> --format: 'csv(a)' is not supported: only value(...) and table(...) take "
            "keys\n");
}

TEST(OutputFormatTest, CustomJobTableShowsTheCreator) {
  json job = json::parse(R"({"name":"projects/p/locations/l/customJobs/7","displayName":"d",
    "state":"JOB_STATE_RUNNING","createTime":"t","trainyardInfo":{"estimatedCostUsd":0.5,
    "creator":{"tokenId":"0123456789abcdef","project":"p","owner":"ana@example.com"}}})");
  EXPECT_EQ(FormatJobs({job}, "table", true),
            "ID  DISPLAY_NAME  STATE              CREATE_TIME  CREATOR          EST_COST_USD\n"
            "7   d             JOB_STATE_RUNNING  t            ana@example.com  0.5000\n");
}

// The CREATOR of a list table: the token's owner, else its description, else its id;
// "anonymous" without tokens; empty for a resource stored before creators were recorded.
TEST(OutputFormatTest, TheCreatorTransformNamesOwnerDescriptionIdOrAnonymous) {
  std::vector<json> items;
  for (const char* creator :
       {R"({"tokenId":"0123456789abcdef","owner":"ana@example.com","description":"CI"})",
        R"({"tokenId":"0123456789abcdef","description":"CI"})", R"({"tokenId":"0123456789abcdef"})",
        R"({"anonymous":true,"callerIp":"127.0.0.1"})", "null"}) {
    items.push_back(json{{"name", "m" + std::to_string(items.size())},
                         {"trainyardInfo", {{"creator", json::parse(creator)}}}});
  }
  auto out = FormatResources(items, "table(name,trainyardInfo.creator.creator())", true);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "NAME  CREATOR\n"
            "m0    ana@example.com\n"
            "m1    CI\n"
            "m2    0123456789abcdef\n"
            "m3    anonymous\n"
            "m4\n");
}

}  // namespace
}  // namespace trainyard::cli
