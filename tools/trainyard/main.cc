// trainyard: the server and the gcloud-compatible CLI of Trainyard (docs/api.md).
//   trainyard server [--host] [--port] [--data-dir] [--executor local]
//   trainyard ai custom-jobs create|list|describe|cancel|stream-logs|delete|local-run
//   trainyard ai models list|describe|upload|list-version|delete|delete-version
//   trainyard storage buckets create|list|describe|delete, ls, cp SRC... DST (through the server)
//   trainyard auth create-token|list-tokens|revoke-token|audit-log
//   trainyard admin backup|restore  (operator commands on the data dir)
//   trainyard gcloud-env        (export lines for gcloud and Google's SDKs)
//   trainyard ai-platform jobs submit training|describe|list|cancel|stream-logs
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "api_client.h"
#include "cli_suggest.h"
#include "commands.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{
      "trainyard: run training jobs on your own machines with the Vertex AI CustomJob "
      "API and gcloud-style commands"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainyard " TRAINYARD_VERSION);
  int exit_code = 0;
  // gcloud's global --access-token-file, accepted anywhere on the line (fallthrough): the
  // commands' ApiClient reads it from the environment (api_client.h).
  app.fallthrough();
  app.add_option_function<std::string>(
      "--access-token-file",
      [](const std::string& path) {
        ::setenv("TRAINYARD_ACCESS_TOKEN_FILE", path.c_str(), 1);
        trainyard::cli::NoteAccessTokenFileFlag(path);
      },
      "File holding the bearer token sent to the server (also $TRAINYARD_ACCESS_TOKEN_FILE, "
      "$CLOUDSDK_AUTH_ACCESS_TOKEN_FILE, or the token itself in $TRAINYARD_ACCESS_TOKEN)");
  // Flags from a file (TOML/INI), a section per command: `[server]` then `port = 8080`,
  // `log-ttl = "30d"` (docs/operations.md). Accepted anywhere on the line (fallthrough), so
  // `trainyard server --config FILE` works; flags on the command line win; an unknown key is an
  // error naming it.
  app.set_config("--config", "",
                 "TOML/INI file of flags: a [server] section with one `flag-name = value` per "
                 "line (docs/operations.md); command-line flags override it");
  app.allow_config_extras(CLI::config_extras_mode::error);
  trainyard::cli::RegisterServerCommand(app, &exit_code);
  trainyard::cli::RegisterAuthCommands(app, &exit_code);
  CLI::App* ai = app.add_subcommand("ai", "Vertex AI-compatible commands");
  ai->require_subcommand(1);
  trainyard::cli::RegisterCustomJobsCommands(*ai, &exit_code);
  trainyard::cli::RegisterStorageCommands(app, &exit_code);
  trainyard::cli::RegisterGcloudEnvCommand(app, &exit_code);
  trainyard::cli::RegisterHpTuningJobsCommands(*ai, &exit_code);  // HP tuning
  trainyard::cli::RegisterModelsCommands(*ai, &exit_code);        // the model registry
  trainyard::cli::RegisterEndpointsCommands(*ai, &exit_code);     // serving models
  trainyard::cli::RegisterAutomlCommands(app, &exit_code);
  trainyard::cli::RegisterAiPlatformCommands(app, &exit_code);         // AI Platform Training
  CLI::App* admin = trainyard::cli::AddAdminCommand(app, &exit_code);  // the server's operator
  trainyard::cli::RegisterAdminServiceCommands(*admin, &exit_code);
  trainyard::cli::RegisterAdminBackupCommands(*admin, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own words name neither the bad word nor the valid ones: say both where we can.
    const std::string why =
        trainyard::cli::ExplainCommandLine(app, std::vector<std::string>(argv + 1, argv + argc));
    std::cerr << "ERROR: (trainyard) " << (why.empty() ? e.what() : why) << "\n"
              << "Run with --help for usage.\n";
    return 2;
  }
  return exit_code;
}
