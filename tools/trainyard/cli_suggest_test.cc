#include "cli_suggest.h"

#include <gtest/gtest.h>

namespace trainyard::cli {
namespace {

class CliSuggestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.require_subcommand(1);
    app_.fallthrough();
    app_.add_option("--access-token-file", token_);
    CLI::App* ai = app_.add_subcommand("ai");
    ai->require_subcommand(1);
    CLI::App* jobs = ai->add_subcommand("custom-jobs");
    jobs->require_subcommand(1);
    CLI::App* create = jobs->add_subcommand("create");
    create->add_option("--display-name", value_);
    create->add_option("--region", value_);
    create->add_flag("--dry-run");
    jobs->add_subcommand("list");
    jobs->add_subcommand("cancel")->add_option("job", value_);
    app_.add_subcommand("storage")->require_subcommand(1)->add_subcommand("cp");
  }
  std::string Explain(const std::vector<std::string>& args) {
    return ExplainCommandLine(app_, args);
  }
  CLI::App app_{"t", "trainyard"};
  std::string token_, value_;
};

TEST_F(CliSuggestTest, NamesTheBadWordAndTheNearestCommand) {
  EXPECT_EQ(Explain({"ai", "custom-jobs", "creat"}),
            "'creat' is not a command of 'trainyard ai custom-jobs'; did you mean 'create'? (its "
            "commands: cancel, create, list)");
  EXPECT_EQ(Explain({"ai", "custom-job", "list"}),
            "'custom-job' is not a command of 'trainyard ai'; did you mean 'custom-jobs'? (its "
            "commands: custom-jobs)");
  EXPECT_EQ(Explain({"storage", "ls", "gs://b"}),
            "'ls' is not a command of 'trainyard storage' (its commands: cp)");
  EXPECT_EQ(Explain({"ai", "custom-jobs"}),
            "'trainyard ai custom-jobs' needs a command: cancel, create, list");
}

TEST_F(CliSuggestTest, NamesTheBadFlagAndTheNearestOne) {
  EXPECT_EQ(Explain({"ai", "custom-jobs", "create", "--region", "r", "--display-nam=x"}),
            "unknown flag '--display-nam' for 'trainyard ai custom-jobs create'; did you mean "
            "'--display-name'?");
  EXPECT_EQ(Explain({"ai", "custom-jobs", "create", "--colour"}),
            "unknown flag '--colour' for 'trainyard ai custom-jobs create'; see --help");
  // A value that looks like a command, a flag of a parent, a positional argument: no complaint.
  EXPECT_EQ(Explain({"ai", "custom-jobs", "create", "--display-name", "list", "--dry-run"}), "");
  EXPECT_EQ(Explain({"--access-token-file", "t", "ai", "custom-jobs", "cancel", "42"}), "");
  EXPECT_EQ(Explain({"ai", "custom-jobs", "create", "--access-token-file=t"}), "");
}

}  // namespace
}  // namespace trainyard::cli
