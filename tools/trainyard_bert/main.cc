// trainyard-bert: the native BERT sentiment trainer (tokenize, make-splits, train, predict).
#include <iostream>
#include <map>

#include "command_registry.h"
#include "common/exit_code.h"

int main(int argc, char** argv) {
  CLI::App app{"trainyard-bert: fine-tune BERT for text classification, natively (LibTorch)"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", std::string("trainyard-bert ") + TRAINYARD_VERSION);
  std::map<CLI::App*, trainyard::tools::CommandRunner> runners;
  for (const auto& def : trainyard::tools::RegisteredCommands()) {
    CLI::App* sub = app.add_subcommand(def.name, def.description);
    runners[sub] = def.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error (EX_USAGE), which a
    // job's executor does not restart (replica_contract::IsPermanentExit).
    return app.exit(e) == 0 ? 0 : trainyard::kExitUsageError;
  }
  for (CLI::App* sub : app.get_subcommands()) {
    try {
      return runners.at(sub)();
    } catch (const std::exception& e) {
      // Subsystems return Status; this is the last line of defence, never the normal path.
      std::cerr << "trainyard-bert " << sub->get_name() << ": internal error: " << e.what() << "\n";
      return trainyard::kExitSoftware;
    }
  }
  return trainyard::kExitUsageError;
}
