// trainyard ai custom-jobs create|list|describe|cancel|stream-logs|delete: gcloud's flags, talking
// to the server over HTTP only; describe/list/cancel/delete are the shared verbs
// (resource_commands.h).
#include <httplib.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "api_client.h"
#include "command_common.h"
#include "commands.h"
#include "gcloud_flags.h"
#include "output_format.h"
#include "resource_commands.h"
#include "spec/custom_job_json.h"

namespace trainyard::cli {
namespace {

using nlohmann::json;

using Common = CommonFlags;

void AddCommon(CLI::App* cmd, Common* c, const std::string& default_format) {
  AddCommonFlags(cmd, c, default_format);
}
std::string Parent(const Common& c) { return ParentName(c); }
std::string JobName(const Common& c, const std::string& job) {
  return ResourceName(c, "customJobs", job);
}
StatusOr<std::unique_ptr<ApiClient>> Client(const Common& c) { return ConnectClient(c); }

void RegisterCreate(CLI::App* jobs, int* exit_code) {
  auto* cmd = jobs->add_subcommand("create", "Create a new custom job");
  auto c = std::make_shared<Common>();
  auto f = std::make_shared<CreateFlags>();
  AddCommon(cmd, c.get(), "");
  cmd->add_option("--display-name", f->display_name, "Display name of the job")->required();
  cmd->add_option("--worker-pool-spec", f->worker_pool_specs,
                  "Worker pool, repeatable in pool order: machine-type=...,replica-count=...,"
                  "accelerator-type=...,accelerator-count=..., and container-image-uri=... or "
                  "executor-image-uri=...,python-module=... (with --python-package-uris), or "
                  "local-package-path=...,script=...")
      ->allow_extra_args(false);
  cmd->add_option("--config", f->config_path, "YAML CustomJobSpec; flags override it");
  cmd->add_option("--args", f->args, "Comma-separated arguments for every pool's program");
  cmd->add_option("--command", f->command,
                  "Comma-separated command replacing the image entrypoint");
  cmd->add_option("--labels", f->labels, "Comma-separated KEY=VALUE labels");
  cmd->add_option("--python-package-uris", f->python_package_uris,
                  "Comma-separated package URIs for executor-image-uri pools");
  cmd->add_option("--service-account", f->service_account, "Recorded on the job");
  cmd->add_option("--network", f->network, "Recorded on the job");
  cmd->add_option("--persistent-resource-id", f->persistent_resource_id, "Not supported");
  cmd->add_flag("--enable-web-access", f->enable_web_access, "Not supported");
  cmd->add_flag("--enable-dashboard-access", f->enable_dashboard_access, "Not supported");
  cmd->callback(Command("trainyard.ai.custom-jobs.create", exit_code, [c, f]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, Client(*c));
    TY_ASSIGN_OR_RETURN(spec::CustomJob request, BuildCreateRequest(*f));
    std::cerr << "Using endpoint [" << client->endpoint() << "]\n";
    TY_ASSIGN_OR_RETURN(json job, client->Call("POST", "/v1/" + Parent(*c) + "/customJobs",
                                               spec::CustomJobToJson(request).dump()));
    std::string name = job.value("name", "");
    std::cerr << "CustomJob [" << name << "] is submitted successfully.\n\n"
              << "Your job is still active. You may view the status of your job with the "
                 "command\n\n  $ trainyard ai custom-jobs describe "
              << name << "\n\nor continue streaming the logs with the command\n\n"
              << "  $ trainyard ai custom-jobs stream-logs " << name << "\n";
    if (!c->format.empty()) std::cout << FormatJobs({job}, c->format, false) << std::flush;
    return Status::Ok();
  }));
}

struct StreamFlags {
  std::string job;
  int polling_interval = 60;
  std::string task_name;
  bool allow_multiline = false;
};

// Prints job `name`'s log (only s.task_name's when set) until it is complete, then the state
// the job ended in; sets *exit_code to 1 when that is not SUCCEEDED.
Status StreamJobLogs(ApiClient& client, const std::string& name, const StreamFlags& s,
                     int* exit_code) {
  const int wait = std::min(s.polling_interval, 15);
  std::string after = "-1";
  while (true) {
    std::string path = "/v1/" + name + ":logs?after=" + after +
                       "&waitSeconds=" + std::to_string(wait) + "&pageSize=1000";
    if (!s.task_name.empty()) {
      path += "&taskName=" + httplib::detail::encode_query_param(s.task_name);
    }
    TY_ASSIGN_OR_RETURN(json page, client.Call("GET", path, "", wait + 30));
    for (const auto& e : page["entries"]) {
      std::cout << "[" << e.value("taskName", "") << "] " << e.value("text", "") << "\n";
    }
    std::cout << std::flush;
    after = page.value("nextCursor", after);
    if (page.value("done", false)) break;
  }
  TY_ASSIGN_OR_RETURN(json job, client.Call("GET", "/v1/" + name));
  std::string state = job.value("state", "");
  std::cerr << "CustomJob [" << name << "] ended in state " << state;
  if (job.contains("error") && job["error"].contains("message")) {
    std::cerr << ": " << job["error"]["message"].get<std::string>();
  }
  std::cerr << "\n";
  if (state != "JOB_STATE_SUCCEEDED") *exit_code = 1;
  return Status::Ok();
}

void RegisterStreamLogs(CLI::App* jobs, int* exit_code) {
  auto* cmd = jobs->add_subcommand("stream-logs", "Stream the logs of a custom job until it ends");
  auto c = std::make_shared<Common>();
  auto s = std::make_shared<StreamFlags>();
  AddCommon(cmd, c.get(), "");
  cmd->add_option("JOB", s->job, "Job id or full name")->required();
  cmd->add_option("--polling-interval", s->polling_interval,
                  "Longest wait in seconds for new lines per request")
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--task-name", s->task_name, "Only this task's logs, e.g. workerpool1-0");
  cmd->add_flag("--allow-multiline-logs", s->allow_multiline, "Accepted for compatibility");
  cmd->callback(
      Command("trainyard.ai.custom-jobs.stream-logs", exit_code, [c, s, exit_code]() -> Status {
        TY_ASSIGN_OR_RETURN(auto client, Client(*c));
        return StreamJobLogs(*client, JobName(*c, s->job), *s, exit_code);
      }));
}

}  // namespace

void RegisterCustomJobsCommands(CLI::App& ai, int* exit_code) {
  CLI::App* jobs = ai.add_subcommand("custom-jobs", "Create and manage custom training jobs");
  jobs->require_subcommand(1);
  RegisterCreate(jobs, exit_code);

  // --- describe, list, cancel, delete (REST DeleteCustomJob; gcloud has no such command) ---
  CliResource resource;
  resource.command = "trainyard.ai.custom-jobs";
  resource.collection = "customJobs";
  resource.noun = "CustomJob";
  resource.formats = CustomJobFormats();
  resource.cancel_message = [](const std::string& name) {
    return "Request to cancel CustomJob [" + name +
           "] has been sent. You may view the status of your job with the command\n\n"
           "  $ trainyard ai custom-jobs describe " +
           name + "\n";
  };
  RegisterResourceVerbs(jobs, resource, kDescribe | kList | kCancel | kDelete, exit_code);

  RegisterStreamLogs(jobs, exit_code);
  RegisterLocalRunCommand(*jobs, exit_code);
}

}  // namespace trainyard::cli
