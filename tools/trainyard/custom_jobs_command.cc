// trainyard ai custom-jobs create|list|describe|cancel|stream-logs|delete: gcloud's flags, talking
// to the server over HTTP only.
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

}  // namespace

void PrintError(const std::string& command, const std::string& message) {
  std::cerr << "ERROR: (" << command << ") " << message << "\n";
}

void RegisterCustomJobsCommands(CLI::App& ai, int* exit_code) {
  CLI::App* jobs = ai.add_subcommand("custom-jobs", "Create and manage custom training jobs");
  jobs->require_subcommand(1);

  // --- create ---
  {
    auto* cmd = jobs->add_subcommand("create", "Create a new custom job");
    auto c = std::make_shared<Common>();
    auto f = std::make_shared<CreateFlags>();
    AddCommon(cmd, c.get(), "");
    cmd->add_option("--display-name", f->display_name, "Display name of the job")->required();
    cmd->add_option("--worker-pool-spec", f->worker_pool_specs,
                    "Worker pool, repeatable in pool order: machine-type=...,replica-count=...,"
                    "accelerator-type=...,accelerator-count=...,container-image-uri=...")
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

  // --- describe ---
  {
    auto* cmd = jobs->add_subcommand("describe", "Show a custom job");
    auto c = std::make_shared<Common>();
    auto job_ref = std::make_shared<std::string>();
    AddCommon(cmd, c.get(), "yaml");
    cmd->add_option("JOB", *job_ref, "Job id or full name")->required();
    cmd->callback(Command("trainyard.ai.custom-jobs.describe", exit_code, [c, job_ref]() -> Status {
      TY_ASSIGN_OR_RETURN(auto client, Client(*c));
      TY_ASSIGN_OR_RETURN(json job, client->Call("GET", "/v1/" + JobName(*c, *job_ref)));
      std::cout << FormatJobs({job}, c->format, false) << std::flush;
      return Status::Ok();
    }));
  }

  // --- list ---
  {
    auto* cmd = jobs->add_subcommand("list", "List custom jobs, newest first");
    auto c = std::make_shared<Common>();
    struct ListFlags {
      std::string filter;
      int limit = 0;
      int page_size = 0;
      std::string sort_by;
      bool uri = false;
    };
    auto l = std::make_shared<ListFlags>();
    AddCommon(cmd, c.get(), "table");
    cmd->add_option("--filter", l->filter,
                    "Server-side filter, e.g. state=\"JOB_STATE_RUNNING\" AND labels.team=nlp");
    cmd->add_option("--limit", l->limit, "Maximum number of jobs to list")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--page-size", l->page_size, "Jobs fetched per request")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--sort-by", l->sort_by,
                    "Field to sort by (displayName, state, createTime); prefix ~ for descending");
    cmd->add_flag("--uri", l->uri, "Print only the job names");
    cmd->callback(Command("trainyard.ai.custom-jobs.list", exit_code, [c, l]() -> Status {
      TY_ASSIGN_OR_RETURN(auto client, Client(*c));
      std::vector<json> all;
      std::string token;
      do {
        std::string path = "/v1/" + Parent(*c) + "/customJobs?pageSize=" +
                           std::to_string(l->page_size ? l->page_size : 100);
        if (!l->filter.empty()) path += "&filter=" + httplib::detail::encode_query_param(l->filter);
        if (!token.empty()) path += "&pageToken=" + token;
        TY_ASSIGN_OR_RETURN(json page, client->Call("GET", path));
        if (page.contains("customJobs")) {
          for (auto& j : page["customJobs"]) all.push_back(j);
        }
        token = page.value("nextPageToken", "");
      } while (!token.empty() && (l->limit == 0 || static_cast<int>(all.size()) < l->limit));
      if (!l->sort_by.empty()) {
        bool desc = l->sort_by[0] == '~';
        std::string key = desc ? l->sort_by.substr(1) : l->sort_by;
        if (key != "displayName" && key != "state" && key != "createTime" && key != "name") {
          return InvalidArgumentError("--sort-by: '" + key +
                                      "' is not one of displayName, state, createTime, name");
        }
        std::stable_sort(all.begin(), all.end(), [&](const json& a, const json& b) {
          return desc ? a.value(key, "") > b.value(key, "") : a.value(key, "") < b.value(key, "");
        });
      }
      if (l->limit > 0 && static_cast<int>(all.size()) > l->limit) all.resize(l->limit);
      if (l->uri) {
        for (const auto& j : all) std::cout << j.value("name", "") << "\n";
      } else if (!all.empty() || c->format != "table") {
        std::cout << FormatJobs(all, c->format, true);
      } else {
        std::cerr << "Listed 0 items.\n";
      }
      std::cout << std::flush;
      return Status::Ok();
    }));
  }

  // --- cancel ---
  {
    auto* cmd = jobs->add_subcommand("cancel", "Cancel a running custom job");
    auto c = std::make_shared<Common>();
    auto job_ref = std::make_shared<std::string>();
    AddCommon(cmd, c.get(), "");
    cmd->add_option("JOB", *job_ref, "Job id or full name")->required();
    cmd->callback(Command("trainyard.ai.custom-jobs.cancel", exit_code, [c, job_ref]() -> Status {
      TY_ASSIGN_OR_RETURN(auto client, Client(*c));
      std::string name = JobName(*c, *job_ref);
      TY_RETURN_IF_ERROR(client->Call("POST", "/v1/" + name + ":cancel", "{}").status());
      std::cerr << "Request to cancel CustomJob [" << name
                << "] has been sent. You may view the status of your job with the command\n\n"
                << "  $ trainyard ai custom-jobs describe " << name << "\n";
      return Status::Ok();
    }));
  }

  // --- delete (REST DeleteCustomJob; gcloud has no such command) ---
  {
    auto* cmd = jobs->add_subcommand("delete", "Delete a finished custom job and its logs");
    auto c = std::make_shared<Common>();
    auto job_ref = std::make_shared<std::string>();
    AddCommon(cmd, c.get(), "");
    cmd->add_option("JOB", *job_ref, "Job id or full name")->required();
    cmd->callback(Command("trainyard.ai.custom-jobs.delete", exit_code, [c, job_ref]() -> Status {
      TY_ASSIGN_OR_RETURN(auto client, Client(*c));
      std::string name = JobName(*c, *job_ref);
      TY_RETURN_IF_ERROR(client->Call("DELETE", "/v1/" + name).status());
      std::cerr << "Deleted CustomJob [" << name << "].\n";
      return Status::Ok();
    }));
  }

  // --- stream-logs ---
  {
    auto* cmd =
        jobs->add_subcommand("stream-logs", "Stream the logs of a custom job until it ends");
    auto c = std::make_shared<Common>();
    struct StreamFlags {
      std::string job;
      int polling_interval = 60;
      std::string task_name;
      bool allow_multiline = false;
    };
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
          const std::string name = JobName(*c, s->job);
          const int wait = std::min(s->polling_interval, 15);
          std::string after = "-1";
          while (true) {
            std::string path = "/v1/" + name + ":logs?after=" + after +
                               "&waitSeconds=" + std::to_string(wait) + "&pageSize=1000";
            if (!s->task_name.empty()) {
              path += "&taskName=" + httplib::detail::encode_query_param(s->task_name);
            }
            TY_ASSIGN_OR_RETURN(json page, client->Call("GET", path, "", wait + 30));
            for (const auto& e : page["entries"]) {
              std::cout << "[" << e.value("taskName", "") << "] " << e.value("text", "") << "\n";
            }
            std::cout << std::flush;
            after = page.value("nextCursor", after);
            if (page.value("done", false)) break;
          }
          TY_ASSIGN_OR_RETURN(json job, client->Call("GET", "/v1/" + name));
          std::string state = job.value("state", "");
          std::cerr << "CustomJob [" << name << "] ended in state " << state;
          if (job.contains("error") && job["error"].contains("message")) {
            std::cerr << ": " << job["error"]["message"].get<std::string>();
          }
          std::cerr << "\n";
          if (state != "JOB_STATE_SUCCEEDED") *exit_code = 1;
          return Status::Ok();
        }));
  }

  RegisterLocalRunCommand(*jobs, exit_code);
}

}  // namespace trainyard::cli
