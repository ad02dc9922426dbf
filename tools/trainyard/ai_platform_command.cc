// trainyard ai-platform jobs submit training|describe|list|cancel|stream-logs: AI Platform
// Training's commands (gcloud ai-platform jobs) over HTTP, against the server's ml v1 routes
// (docs/api.md, "Coming from AI Platform Training"). The real gcloud works as well; this is for
// hosts without it. describe/list/cancel are the shared verbs (resource_commands.h); packages are
// given as gs:// archives (--packages: build and upload them with `trainyard storage cp`).
//
//   trainyard ai-platform jobs submit training JOB --region=R [--config=FILE]
//       [--master-image-uri=I | --packages=gs://...tar.gz --module-name=M --runtime-version=V
//        [--python-version=P]] [--scale-tier=T] [--master-machine-type=M]
//       [--master-accelerator=count=N,type=T] [--worker-count=N --worker-machine-type=M]
//       [--job-dir=gs://...] [--labels=K=V,...] [--use-chief-in-tf-config] [--stream-logs]
//       [-- ARGS...]
//   trainyard ai-platform jobs stream-logs JOB [--polling-interval=S] [--task-name=T]
#include <httplib.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "command_common.h"
#include "commands.h"
#include "common/file_util.h"
#include "gcloud_flags.h"
#include "resource_commands.h"
#include "spec/job_config_yaml.h"

namespace trainyard::cli {
namespace {

using nlohmann::json;

struct SubmitFlags {
  std::string job, config, master_image_uri, packages, module_name, runtime_version;
  std::string python_version, scale_tier, master_machine_type, master_accelerator;
  std::string worker_machine_type, job_dir, labels;
  int64_t worker_count = -1;
  bool use_chief = false, stream_logs = false;
  std::vector<std::string> args;
};

std::string Project(const CommonFlags& c) {
  const std::string parent = ParentName(c);  // projects/P/locations/L
  return parent.substr(9, parent.find('/', 9) - 9);
}

std::string Upper(std::string s) {
  for (char& ch : s) ch = ch == '-' ? '_' : static_cast<char>(std::toupper(ch));
  return s;
}

// The request gcloud builds: the --config document, each flag overriding one field.
StatusOr<json> SubmitBody(const CommonFlags& c, const SubmitFlags& f) {
  json job = json::object();
  if (!f.config.empty()) {
    TY_ASSIGN_OR_RETURN(std::string text, ReadFile(f.config));
    TY_ASSIGN_OR_RETURN(job, spec::YamlToJson(text));
    if (!job.is_object()) return InvalidArgumentError("--config: expected a Job document");
  }
  job["jobId"] = f.job;
  json& in = job["trainingInput"];
  if (!in.is_object()) in = json::object();
  in["region"] = c.region.empty() ? ParentName(c).substr(ParentName(c).rfind('/') + 1) : c.region;
  auto set = [&in](const char* key, const std::string& v) {
    if (!v.empty()) in[key] = v;
  };
  set("scaleTier", f.scale_tier.empty() ? "" : Upper(f.scale_tier));
  set("masterType", f.master_machine_type);
  set("workerType", f.worker_machine_type);
  set("pythonModule", f.module_name);
  set("runtimeVersion", f.runtime_version);
  set("pythonVersion", f.python_version);
  set("jobDir", f.job_dir);
  if (!f.master_image_uri.empty()) in["masterConfig"]["imageUri"] = f.master_image_uri;
  if (!f.master_accelerator.empty()) {
    TY_ASSIGN_OR_RETURN(auto acc, ParseArgDict("--master-accelerator", f.master_accelerator));
    in["masterConfig"]["acceleratorConfig"] = {{"count", acc["count"]},
                                               {"type", Upper(acc["type"])}};
  }
  if (f.worker_count >= 0) in["workerCount"] = std::to_string(f.worker_count);
  if (!f.packages.empty()) in["packageUris"] = ParseArgList(f.packages);
  if (f.use_chief) in["useChiefInTfConfig"] = true;
  if (!f.args.empty()) in["args"] = f.args;
  if (!f.labels.empty()) {
    TY_ASSIGN_OR_RETURN(auto labels, ParseArgDict("--labels", f.labels));
    job["labels"] = labels;  // replaces the file's, as gcloud does
  }
  return job;
}

// Prints the job's log entries (gcloud's columns) until the job has ended and no more come;
// returns the job as it ended.
StatusOr<json> StreamLogs(ApiClient& client, const CommonFlags& c, const std::string& job_id,
                          int interval, const std::string& task, std::ostream& out) {
  const std::string name = "projects/" + Project(c) + "/jobs/" + job_id;
  std::string filter =
      "(resource.type=\"ml_job\" OR resource.type=\"cloudml_job\") AND resource.labels.job_id=\"" +
      job_id + "\"";
  if (!task.empty()) filter += " AND resource.labels.task_name=\"" + task + "\"";
  std::string token, last_time, last_id;  // where the previous poll ended, as gcloud resumes
  while (true) {
    TY_ASSIGN_OR_RETURN(json job, client.Call("GET", "/v1/" + name));
    const bool ended = job.contains("endTime");
    bool any = false;
    const std::string after = last_time.empty()
                                  ? ""
                                  : " AND ((timestamp=\"" + last_time + "\" AND insertId>\"" +
                                        last_id + "\") OR timestamp>\"" + last_time + "\")";
    do {
      json body = {{"resourceNames", {"projects/" + Project(c)}},
                   {"filter", filter + after},
                   {"orderBy", "timestamp asc"},
                   {"pageSize", 1000}};
      if (!token.empty()) body["pageToken"] = token;
      TY_ASSIGN_OR_RETURN(json page, client.Call("POST", "/v2/entries:list", body.dump()));
      for (const auto& e : page.value("entries", json::array())) {
        const json& labels = e.value("labels", json::object());
        out << e.value("severity", "") << "\t" << e.value("timestamp", "") << "\t"
            << e["resource"]["labels"].value("task_name", "") << "\t"
            << labels.value("ml.googleapis.com/trial_id", "") << "\t" << e.value("textPayload", "")
            << "\n";
        last_time = e.value("timestamp", last_time);
        last_id = e.value("insertId", last_id);
        any = true;
      }
      token = page.value("nextPageToken", "");
    } while (!token.empty());
    out << std::flush;
    if (ended && !any) return job;
    if (!any) std::this_thread::sleep_for(std::chrono::seconds(interval));
  }
}

void AddSubmit(CLI::App* jobs, int* exit_code) {
  auto* submit = jobs->add_subcommand("submit", "Submit AI Platform jobs");
  submit->require_subcommand(1);
  auto* cmd = submit->add_subcommand("training", "Submit a training job");
  auto c = std::make_shared<CommonFlags>();
  auto f = std::make_shared<SubmitFlags>();
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("JOB", f->job, "The job id (letters, digits, '_')")->required();
  cmd->add_option("ARGS", f->args, "Arguments for the trainer (after --)");
  cmd->add_option("--config", f->config, "YAML Job (trainingInput, labels); flags override it");
  cmd->add_option("--master-image-uri", f->master_image_uri, "The master's container image");
  cmd->add_option("--packages", f->packages, "Comma-separated gs:// package archives");
  cmd->add_option("--module-name", f->module_name, "The module to run, e.g. trainer.task");
  cmd->add_option("--runtime-version", f->runtime_version, "AI Platform runtime version");
  cmd->add_option("--python-version", f->python_version, "Python version");
  cmd->add_option("--scale-tier", f->scale_tier, "basic, basic-gpu, standard-1, premium-1, custom");
  cmd->add_option("--master-machine-type", f->master_machine_type, "The master's machine");
  cmd->add_option("--master-accelerator", f->master_accelerator, "count=N,type=T");
  cmd->add_option("--worker-count", f->worker_count, "Workers (scale tier CUSTOM)");
  cmd->add_option("--worker-machine-type", f->worker_machine_type, "The workers' machine");
  cmd->add_option("--job-dir", f->job_dir, "Passed to the trainer as --job-dir");
  cmd->add_option("--labels", f->labels, "Comma-separated KEY=VALUE labels");
  cmd->add_flag("--use-chief-in-tf-config", f->use_chief, "TF_CONFIG names pool 0 chief");
  cmd->add_flag("--stream-logs", f->stream_logs, "Stream the logs until the job ends");
  cmd->callback(Command(
      "trainyard.ai-platform.jobs.submit.training", exit_code, [c, f, exit_code]() -> Status {
        TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
        TY_ASSIGN_OR_RETURN(json body, SubmitBody(*c, *f));
        TY_ASSIGN_OR_RETURN(
            json job, client->Call("POST", "/v1/projects/" + Project(*c) + "/jobs", body.dump()));
        std::cerr << "Job [" << job.value("jobId", "") << "] submitted successfully.\n";
        if (f->stream_logs) {
          TY_ASSIGN_OR_RETURN(job, StreamLogs(*client, *c, f->job, 5, "", std::cerr));
          if (job.value("state", "") != "SUCCEEDED") *exit_code = 1;
        }
        std::cout << "jobId: " << job.value("jobId", "") << "\nstate: " << job.value("state", "")
                  << "\n";
        return Status::Ok();
      }));
}

}  // namespace

void RegisterAiPlatformCommands(CLI::App& app, int* exit_code) {
  CLI::App* group = app.add_subcommand("ai-platform", "AI Platform Training-compatible commands");
  group->require_subcommand(1);
  CLI::App* jobs = group->add_subcommand("jobs", "Submit and manage AI Platform training jobs");
  jobs->require_subcommand(1);
  AddSubmit(jobs, exit_code);
  CliResource resource;
  resource.command = "trainyard.ai-platform.jobs";
  resource.collection = "jobs";
  resource.noun = "job";
  resource.project_parent = true;
  resource.list_format =
      "table(jobId,state:label=STATUS,createTime:label=CREATED,trainyardInfo.creator.creator())";
  resource.cancel_message = [](const std::string&) { return std::string(); };  // gcloud: silent
  RegisterResourceVerbs(jobs, resource, kDescribe | kList | kCancel, exit_code);

  auto* cmd = jobs->add_subcommand("stream-logs", "Stream a job's logs until it ends");
  auto c = std::make_shared<CommonFlags>();
  auto job = std::make_shared<std::string>();
  auto interval = std::make_shared<int>(60);
  auto task = std::make_shared<std::string>();
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("JOB", *job, "The job id")->required();
  cmd->add_option("--polling-interval", *interval, "Seconds between polls")
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--task-name", *task, "Only this task's logs, e.g. master-replica-0");
  cmd->callback(Command(
      "trainyard.ai-platform.jobs.stream-logs", exit_code, [c, job, interval, task]() -> Status {
        TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
        return StreamLogs(*client, *c, *job, *interval, *task, std::cout).status();
      }));
}

}  // namespace trainyard::cli
