// The shared CLI verbs (resource_commands.h) on "widgets", the test-only resource
// (api/widget_resource_testing.h): describe, list with every format, cancel and delete, with no
// CLI code of the resource's own.
#include "resource_commands.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "api/widget_resource_testing.h"

namespace trainyard::cli {
namespace {

struct CliRun {
  int exit_code = 0;
  std::string out, err;
};

class ResourceCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TRAINYARD_ENDPOINT", ("http://127.0.0.1:" + std::to_string(server_.port())).c_str(), 1);
    setenv("TRAINYARD_PROJECT", "p", 1);
    setenv("TRAINYARD_REGION", "us-central1", 1);
    for (const char* id : {"w1", "w2", "w3"}) {
      std::string body = std::string("{\"displayName\":\"") + id + "\",\"labels\":{\"n\":\"" +
                         (id[1] == '2' ? "b" : "a") + "\"}}";
      ASSERT_TRUE(server_.widgets().Create("projects/p/locations/us-central1", body, id).ok());
    }
  }

  // `trainyard ai widgets ARGS...` through the shared verbs only.
  CliRun Cli(std::vector<std::string> args) {
    CLI::App app("test");
    CLI::App* ai = app.add_subcommand("ai");
    CLI::App* group = ai->add_subcommand("widgets");
    CliResource widgets;
    widgets.command = "trainyard.ai.widgets";
    widgets.collection = "widgets";
    widgets.noun = "Widget";
    CliRun run;
    RegisterResourceVerbs(group, widgets, kDescribe | kList | kCancel | kDelete, &run.exit_code);
    args.insert(args.begin(), {"ai", "widgets"});
    std::reverse(args.begin(), args.end());
    std::ostringstream out, err;
    auto* old_out = std::cout.rdbuf(out.rdbuf());
    auto* old_err = std::cerr.rdbuf(err.rdbuf());
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      run.exit_code = 2;
    }
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    run.out = out.str();
    run.err = err.str();
    return run;
  }

  api::TestApiServer server_;
};

TEST_F(ResourceCommandsTest, ListPrintsEveryFormatNewestFirst) {
  CliRun table = Cli({"list"});
  CliRun value = Cli({"list", "--format=value(name.basename(), labels.n, state)", "--page-size=1"});
  CliRun custom =
      Cli({"list", "--format=table(displayName:label=WHO, sizeCm)", "--filter=labels.n=a"});
  CliRun limited = Cli({"list", "--limit=1", "--uri"});
  CliRun sorted = Cli({"list", "--sort-by=displayName", "--format=value(displayName)"});
  EXPECT_EQ(table.out.substr(0, table.out.find('\n')),
            "ID  DISPLAY_NAME  STATE          CREATE_TIME");
  EXPECT_EQ(value.out + "|" + custom.out + "|" + limited.out + "|" + sorted.out,
            "w3\ta\tWIDGET_ACTIVE\nw2\tb\tWIDGET_ACTIVE\nw1\ta\tWIDGET_ACTIVE\n|"
            "WHO  SIZE_CM\nw3   10\nw1   10\n|"
            "projects/p/locations/us-central1/widgets/w3\n|w1\nw2\nw3\n");
}

TEST_F(ResourceCommandsTest, DescribeCancelAndDeleteOneWidget) {
  CliRun describe = Cli({"describe", "w2", "--format=json"});
  CliRun early = Cli({"delete", "w2"});
  CliRun cancel = Cli({"cancel", "projects/p/locations/us-central1/widgets/w2"});
  CliRun state = Cli({"describe", "w2", "--format=value(state)"});
  CliRun deleted = Cli({"delete", "w2"});
  CliRun gone = Cli({"describe", "w2"});
  EXPECT_EQ(
      std::to_string(describe.exit_code) + " " +
          std::to_string(describe.out.find("\"displayName\": \"w2\"") != std::string::npos) +
          " | " + std::to_string(early.exit_code) + " " + early.err.substr(0, 56) + " | " +
          cancel.err + state.out + deleted.err + std::to_string(gone.exit_code),
      "0 1 | 1 ERROR: (trainyard.ai.widgets.delete) FAILED_PRECONDITION | "
      "Request to cancel Widget [projects/p/locations/us-central1/widgets/w2] has been "
      "sent.\nWIDGET_RETIRED\nDeleted Widget [projects/p/locations/us-central1/widgets/w2].\n1");
}

TEST_F(ResourceCommandsTest, ABadFormatIsAUsageErrorNamingTheFlag) {
  CliRun bad = Cli({"list", "--format=value(name"});
  CliRun xml = Cli({"describe", "w1", "--format=xml"});
  auto head = [](const std::string& err) { return err.substr(0, err.find(" is not supported")); };
  EXPECT_EQ(std::to_string(bad.exit_code) + " " + head(bad.err) + " | " +
                std::to_string(xml.exit_code) + " " + head(xml.err),
            "2 ERROR: (trainyard.ai.widgets.list) INVALID_ARGUMENT: --format: 'value(name' | 2 "
            "ERROR: (trainyard.ai.widgets.describe) INVALID_ARGUMENT: --format: 'xml'");
}

}  // namespace
}  // namespace trainyard::cli
