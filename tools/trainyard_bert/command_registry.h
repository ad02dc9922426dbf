// Subcommand registry of trainyard-bert.
//
// Each *_command.cc defines one subcommand with a file-scope registrar:
//
//   namespace {
//   const bool kRegistered = RegisterCommand({
//       .name = "tokenize", .description = "...", .order = 10,
//       .setup = [](CLI::App& sub) -> CommandRunner {
//         auto opts = std::make_shared<Options>();
//         sub.add_option("--vocab", opts->vocab, "...")->required();
//         return [opts] { return RunTokenize(*opts); };  // returns the process exit code
//       }});
//   }
//
// Command files are linked straight into the executable (not through a static library), so the
// registrars always run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::tools {

using CommandRunner = std::function<int()>;

struct CommandDef {
  std::string name;
  std::string description;
  int order = 100;  // position in --help
  std::function<CommandRunner(CLI::App& sub)> setup;
};

bool RegisterCommand(CommandDef def);
const std::vector<CommandDef>& RegisteredCommands();

// Prints "<prefix><message>" on stderr, with local paths under the bucket root written as the
// gs:// URIs the user passed (common/bucket_path.h WithGcsUris), and returns the trainer's exit
// code for `s` (common/exit_code.h TrainerExitCodeFor): what a job's executor reads to decide
// whether a restart can help.
int ReportFailure(std::string_view prefix, const Status& s);

}  // namespace trainyard::tools
