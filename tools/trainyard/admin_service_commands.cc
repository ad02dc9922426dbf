// trainyard admin gc|drain|resume|status: the server's own administration through its
// /v1/admin:* routes (src/server/admin_routes.h; an admin token of every project when the server
// runs with --auth).
//   trainyard admin gc [--dry-run] [--format json]   one retention pass now (retention.h)
//   trainyard admin drain                            stop starting new jobs (they queue, held)
//   trainyard admin resume                           start the held jobs and new ones again
//   trainyard admin status                           draining?, held jobs, version
#include <iostream>

#include "command_common.h"
#include "commands.h"
#include "server/retention.h"

namespace trainyard::cli {
namespace {

void AddGc(CLI::App& admin, int* exit_code) {
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

// drain, resume, status: one call each; the server's answer is printed as JSON.
void AddCall(CLI::App& admin, int* exit_code, const std::string& name, const std::string& method,
             const std::string& path, const std::string& help) {
  auto endpoint = std::make_shared<std::string>();
  auto* cmd = admin.add_subcommand(name, help);
  cmd->add_option("--endpoint", *endpoint, "Server URL (default $TRAINYARD_ENDPOINT)");
  cmd->callback(Command("trainyard.admin." + name, exit_code, [=]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, ApiClient::Connect(ResolveEndpoint(*endpoint)));
    TY_ASSIGN_OR_RETURN(nlohmann::json answer,
                        client->Call(method, path, method == "POST" ? "{}" : "", 600));
    std::cout << answer.dump(2) << "\n";
    return Status::Ok();
  }));
}

}  // namespace

void RegisterAdminServiceCommands(CLI::App& admin, int* exit_code) {
  AddGc(admin, exit_code);
  AddCall(admin, exit_code, "drain", "POST", "/v1/admin:drain",
          "Stop starting new jobs: creates are accepted and held QUEUED (running jobs run on) "
          "until `trainyard admin resume`; kept across server restarts");
  AddCall(admin, exit_code, "resume", "POST", "/v1/admin:resume",
          "Start the held jobs, oldest first, and new ones again");
  AddCall(admin, exit_code, "status", "GET", "/v1/admin:status",
          "Whether the server is draining, how many jobs it holds, its version");
}

}  // namespace trainyard::cli
