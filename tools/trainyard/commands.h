// The `trainyard` subcommands. Each Register* adds its subcommands to the CLI11 app; a command's
// callback stores its process exit code in *exit_code (0 ok, 1 failed request or job, 2 usage).
#pragma once

#include <CLI/CLI.hpp>

namespace trainyard::cli {

void RegisterServerCommand(CLI::App& app, int* exit_code);
void RegisterCustomJobsCommands(CLI::App& ai, int* exit_code);
void RegisterLocalRunCommand(CLI::App& custom_jobs, int* exit_code);
void RegisterStorageCommands(CLI::App& app, int* exit_code);
void RegisterGcloudEnvCommand(CLI::App& app, int* exit_code);
// HP tuning (hp_tuning_jobs_command.cc, automl_command.cc).
void RegisterHpTuningJobsCommands(CLI::App& ai, int* exit_code);
void RegisterAutomlCommands(CLI::App& app, int* exit_code);
// trainyard ai models list|describe|upload|list-version|delete|delete-version (models_command.cc).
void RegisterModelsCommands(CLI::App& ai, int* exit_code);
// trainyard ai endpoints: serving models (endpoints_command.cc).
void RegisterEndpointsCommands(CLI::App& ai, int* exit_code);
// trainyard auth create-token|list-tokens|revoke-token|audit-log (auth_command.cc).
void RegisterAuthCommands(CLI::App& app, int* exit_code);
// trainyard ai-platform jobs submit training|describe|list|cancel|stream-logs
// (ai_platform_command.cc).
void RegisterAiPlatformCommands(CLI::App& app, int* exit_code);

// trainyard admin: the parent of the operator commands (retention, draining, backups); returns
// it so each family adds its subcommands (admin_command.cc).
CLI::App* AddAdminCommand(CLI::App& app, int* exit_code);
// trainyard admin backup|restore (admin_command.cc; the library is server/backup.h).
void RegisterAdminBackupCommands(CLI::App& admin, int* exit_code);
// trainyard admin gc|drain|resume|status (admin_service_commands.cc).
void RegisterAdminServiceCommands(CLI::App& admin, int* exit_code);

// "ERROR: (trainyard.ai.custom-jobs.create) INVALID_ARGUMENT: message" on stderr, like gcloud.
void PrintError(const std::string& command, const std::string& message);

}  // namespace trainyard::cli
