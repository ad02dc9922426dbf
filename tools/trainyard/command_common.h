// Flags and helpers shared by the `trainyard ai ...` command families (custom-jobs,
// hp-tuning-jobs): --endpoint/--region/--project/--format, resource names, error exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

#include "api_client.h"
#include "commands.h"
#include "common/exit_code.h"
#include "common/status.h"

namespace trainyard::cli {

struct CommonFlags {
  std::string endpoint;
  std::string region;
  std::string project;
  std::string format;
};

// The first non-empty variable of `names`, else `fallback`.
std::string EnvOr(std::initializer_list<const char*> names, const std::string& fallback);

// Adds --endpoint, --region, --project and --format (defaulting to `default_format`).
void AddCommonFlags(CLI::App* cmd, CommonFlags* c, const std::string& default_format);

// "projects/P/locations/L": flags first, then $TRAINYARD_PROJECT/$CLOUDSDK_CORE_PROJECT (default
// "local") and $TRAINYARD_REGION/$CLOUDSDK_AI_REGION (default "us-central1"), as gcloud does.
std::string ParentName(const CommonFlags& c);

// An id or a full name, as gcloud accepts: a full "projects/..." name is returned unchanged,
// else ParentName(c) + "/" + collection + "/" + id.
std::string ResourceName(const CommonFlags& c, const std::string& collection,
                         const std::string& id_or_name);

// Checks --format and connects to the resolved endpoint.
StatusOr<std::unique_ptr<ApiClient>> ConnectClient(const CommonFlags& c);

// Polls an operation until it is done (gcloud's "Waiting for operation [ID]...done." on stderr);
// its error, if it has one, as a Status.
StatusOr<nlohmann::json> WaitForOperation(ApiClient& client, nlohmann::json op);

// TRAINYARD_CHECK_COMMAND_LINE=1: the command line is parsed as usual (commands, flags, required
// flags, values) but no command runs; the exit code says whether it parsed (0, or 2 with the
// explanation). docs_commands_e2e_test checks every `trainyard` line of the README and docs this
// way. Every command's callback returns at once when this is true (Command() does it for its
// bodies).
bool CheckCommandLineOnly();

// Wraps `body` as a CLI11 callback: an error Status is printed gcloud-style and becomes an exit
// code through ExitCodeFor (common/exit_code.h). The commands' own checks name the flag
// ("--filter: ..."); any other error came from the server or the connection (exit 1).
template <typename Fn>
std::function<void()> Command(const std::string& name, int* exit_code, Fn body) {
  return [name, exit_code, body] {
    if (CheckCommandLineOnly()) return;
    Status s = body();
    if (!s.ok()) {
      PrintError(name, s.ToString());
      *exit_code = ExitCodeFor(
          s, s.message().starts_with("--") ? ErrorOrigin::kInvocation : ErrorOrigin::kServer);
    }
  };
}

}  // namespace trainyard::cli
