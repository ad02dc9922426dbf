#include "cli_suggest.h"

#include <algorithm>

#include "common/nearest_name.h"

namespace trainyard::cli {
namespace {

// "trainyard ai custom-jobs": the root's name is argv[0] after parse, so only its file name.
std::string Path(const CLI::App* app) {
  std::string path;
  for (; app != nullptr; app = app->get_parent()) {
    std::string name = app->get_name();
    if (app->get_parent() == nullptr) {
      name = name.substr(name.find_last_of('/') + 1);
      if (name.empty()) name = "trainyard";
    }
    path = name + (path.empty() ? "" : " " + path);
  }
  return path;
}

std::vector<std::string> CommandNames(CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// The option `flag` ("--x" or "-x", without "=value") names on `app` or, for commands that
// take their parents' options (fallthrough), on an ancestor; nullptr when none.
const CLI::Option* FindOption(CLI::App* app, const std::string& flag) {
  for (; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* opt : app->get_options()) {
      for (const std::string& name : opt->get_lnames()) {
        if (flag == "--" + name) return opt;
      }
      for (const std::string& name : opt->get_snames()) {
        if (flag == "-" + name) return opt;
      }
    }
  }
  return nullptr;
}

std::vector<std::string> LongFlags(CLI::App* app) {
  std::vector<std::string> flags;
  for (; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* opt : app->get_options()) {
      for (const std::string& name : opt->get_lnames()) flags.push_back("--" + name);
    }
  }
  return flags;
}

}  // namespace

std::string ExplainCommandLine(CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* current = &app;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg[0] == '-') {
      const std::string flag = arg.substr(0, arg.find('='));
      const CLI::Option* opt = FindOption(current, flag);
      if (opt == nullptr) {
        const std::string near = NearestName(flag, LongFlags(current));
        return "unknown flag '" + flag + "' for '" + Path(current) + "'" +
               (near.empty() ? "; see --help" : "; did you mean '" + near + "'?");
      }
      if (arg.find('=') == std::string::npos && opt->get_items_expected_max() > 0) ++i;
      continue;
    }
    const std::vector<std::string> commands = CommandNames(current);
    if (commands.empty()) continue;  // a positional argument of the command
    CLI::App* sub = nullptr;
    for (CLI::App* s : current->get_subcommands([](CLI::App*) { return true; })) {
      if (s->check_name(arg)) sub = s;
    }
    if (sub != nullptr) {
      current = sub;
      continue;
    }
    if (current->get_require_subcommand_min() == 0) continue;
    const std::string near = NearestName(arg, commands);
    return "'" + arg + "' is not a command of '" + Path(current) + "'" +
           (near.empty() ? "" : "; did you mean '" + near + "'?") +
           " (its commands: " + Join(commands) + ")";
  }
  if (current->get_require_subcommand_min() > 0 && !CommandNames(current).empty()) {
    return "'" + Path(current) + "' needs a command: " + Join(CommandNames(current));
  }
  return "";
}

}  // namespace trainyard::cli
