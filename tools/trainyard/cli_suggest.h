// What to tell a user whose command line CLI11 refused: the word that is not a command or a flag,
// the nearest valid one, and the valid commands where one is missing. CLI11 itself says only "A
// subcommand is required" or "The following arguments were not expected", naming neither.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trainyard::cli {

// Walks `args` (argv without argv[0]) through `app`'s commands as CLI11 would and explains the
// first problem it meets:
//   "'creat' is not a command of 'trainyard ai custom-jobs'; did you mean 'create'? (its
//   commands: cancel, create, ...)"
//   "unknown flag '--display-nam' for 'trainyard ai custom-jobs create'; did you mean
//   '--display-name'?"
//   "'trainyard ai custom-jobs' needs a command: cancel, create, ..."
// "" when it finds none (the error is about a value, not a word).
std::string ExplainCommandLine(CLI::App& app, const std::vector<std::string>& args);

}  // namespace trainyard::cli
