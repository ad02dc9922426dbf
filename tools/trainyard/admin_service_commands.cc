// trainyard admin gc|drain|resume|status: the server's own administration through its
// /v1/admin:* routes (src/server/admin_routes.h; an admin token of every project when the server
// runs with --auth).
//   trainyard admin gc [--dry-run] [--format json]   one retention pass now (retention.h)
//   trainyard admin drain [--project P]              stop starting new jobs (they queue, held),
//                                                    of the server or of project P only
//   trainyard admin resume [--project P]             start the held jobs and new ones again
//   trainyard admin status                           draining?, held jobs, paused projects, version
//   trainyard admin quota set P [--vcpus N] [--memory-gib N] [--gpus TYPE=N]... [--jobs N]
//                              [--weight W]          a project's quota (docs/operations.md)
//   trainyard admin quota clear P                    no limits for P again
//   trainyard admin quota list                       every project's quota, use, held jobs
#include <cstdio>
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

// status, quota list: one call each; the server's answer is printed as JSON.
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

// drain and resume: of the server (/v1/admin:drain) or, with --project, of one project
// (/v1/admin/projects/P:drain, which an admin of P may call too).
void AddPause(CLI::App& admin, int* exit_code, const std::string& verb, const std::string& help) {
  struct Flags {
    std::string endpoint, project;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = admin.add_subcommand(verb, help);
  cmd->add_option("--project", f->project, "Only this project (an admin of it may do this)");
  cmd->add_option("--endpoint", f->endpoint, "Server URL (default $TRAINYARD_ENDPOINT)");
  cmd->callback(Command("trainyard.admin." + verb, exit_code, [f, verb]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    const std::string path =
        f->project.empty() ? "/v1/admin:" + verb : "/v1/admin/projects/" + f->project + ":" + verb;
    TY_ASSIGN_OR_RETURN(nlohmann::json answer, client->Call("POST", path, "{}", 600));
    std::cout << answer.dump(2) << "\n";
    return Status::Ok();
  }));
}

// quota set|clear|list over /v1/admin/projects/P:setQuota|:clearQuota and /v1/admin/quotas.
void AddQuota(CLI::App& admin, int* exit_code) {
  auto* quota = admin.add_subcommand("quota", "Per-project quotas and fair-share weights");
  quota->require_subcommand(1);
  struct Flags {
    std::string endpoint, project;
    // -1: not given (unlimited; weight 1).
    double vcpus = -1, memory_gib = -1, weight = -1;
    int jobs = -1;
    std::vector<std::string> gpus;
  };
  auto f = std::make_shared<Flags>();
  auto* set = quota->add_subcommand(
      "set",
      "Set a project's quota (what is not given is unlimited) and weight; held jobs that "
      "fit start");
  set->add_option("PROJECT", f->project, "The project id")->required();
  set->add_option("--vcpus", f->vcpus, "vCPUs its jobs may hold at once");
  set->add_option("--memory-gib", f->memory_gib, "GiB of memory its jobs may hold at once");
  set->add_option("--gpus", f->gpus, "TYPE=N: GPUs of acceleratorType TYPE (repeatable)");
  set->add_option("--jobs", f->jobs, "Jobs it may run (or queue in the executor) at once");
  set->add_option("--weight", f->weight, "Fair-share weight (default 1)");
  set->add_option("--endpoint", f->endpoint, "Server URL (default $TRAINYARD_ENDPOINT)");
  set->callback(Command("trainyard.admin.quota.set", exit_code, [f]() -> Status {
    nlohmann::json body = nlohmann::json::object();
    // The server checks the values (negative ones name the field there).
    if (f->vcpus != -1) body["vcpus"] = f->vcpus;
    if (f->memory_gib != -1) body["memoryGib"] = f->memory_gib;
    if (f->jobs != -1) body["concurrentJobs"] = f->jobs;
    if (f->weight != -1) body["weight"] = f->weight;
    for (const std::string& g : f->gpus) {
      const size_t eq = g.find('=');
      int n = -1;
      if (eq == std::string::npos || std::sscanf(g.c_str() + eq + 1, "%d", &n) != 1 || n < 0) {
        return InvalidFieldError("--gpus",
                                 "expected TYPE=N, e.g. NVIDIA_TESLA_T4=2; got '" + g + "'");
      }
      body["gpus"][g.substr(0, eq)] = n;
    }
    TY_ASSIGN_OR_RETURN(auto client, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    TY_ASSIGN_OR_RETURN(
        nlohmann::json answer,
        client->Call("POST", "/v1/admin/projects/" + f->project + ":setQuota", body.dump(), 600));
    std::cout << answer.dump(2) << "\n";
    return Status::Ok();
  }));
  auto clear_project = std::make_shared<std::string>();
  auto* clear = quota->add_subcommand("clear", "Remove a project's quota (no limits, weight 1)");
  clear->add_option("PROJECT", *clear_project, "The project id")->required();
  clear->add_option("--endpoint", f->endpoint, "Server URL (default $TRAINYARD_ENDPOINT)");
  clear->callback(Command("trainyard.admin.quota.clear", exit_code, [f, clear_project]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    TY_ASSIGN_OR_RETURN(
        nlohmann::json answer,
        client->Call("POST", "/v1/admin/projects/" + *clear_project + ":clearQuota", "{}", 600));
    std::cout << answer.dump(2) << "\n";
    return Status::Ok();
  }));
  AddCall(*quota, exit_code, "list", "GET", "/v1/admin/quotas",
          "Every project's quota, what its jobs hold and how many wait held");
}

}  // namespace

void RegisterAdminServiceCommands(CLI::App& admin, int* exit_code) {
  AddGc(admin, exit_code);
  AddPause(admin, exit_code, "drain",
           "Stop starting new jobs of the server (or of --project P): creates are accepted and "
           "held QUEUED (running jobs run on) until `trainyard admin resume`; kept across server "
           "restarts");
  AddPause(admin, exit_code, "resume",
           "Start the held jobs of the server (or of --project P), oldest first, and new ones "
           "again");
  AddCall(admin, exit_code, "status", "GET", "/v1/admin:status",
          "Whether the server is draining, how many jobs it holds, the paused projects, its "
          "version");
  AddQuota(admin, exit_code);
}

}  // namespace trainyard::cli
