// trainyard admin gc: one retention pass on the server now (src/server/retention.h), through
// POST /v1/admin:gc (an admin token of every project when the server runs with --auth).
//   trainyard admin gc [--dry-run] [--format json]
#include <iostream>

#include "command_common.h"
#include "commands.h"
#include "server/retention.h"

namespace trainyard::cli {

void RegisterAdminGcCommand(CLI::App& admin, int* exit_code) {
  struct Flags {
    std::string endpoint, format;
    bool dry_run = false;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = admin.add_subcommand(
      "gc",
      "Remove now what the server's retention removes every --gc-interval: ended jobs' work "
      "files, old job logs, finished operations and audit entries past their TTLs");
  cmd->add_option("--endpoint", f->endpoint, "Server URL (default $TRAINYARD_ENDPOINT)");
  cmd->add_flag("--dry-run", f->dry_run, "Only count what would be removed");
  cmd->add_option("--format", f->format, "json: print the server's report as it is")
      ->check(CLI::IsMember({"json"}));
  cmd->callback(Command("trainyard.admin.gc", exit_code, [f]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    const nlohmann::json body = {{"dryRun", f->dry_run}};
    TY_ASSIGN_OR_RETURN(nlohmann::json report,
                        client->Call("POST", "/v1/admin:gc", body.dump(), 600));
    if (f->format == "json") {
      std::cout << report.dump(2) << "\n";
    } else {
      std::cout << server::GcReport::FromJson(report).Summary() << "\n";
    }
    return Status::Ok();
  }));
}

}  // namespace trainyard::cli
