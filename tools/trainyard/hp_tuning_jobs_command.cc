// trainyard ai hp-tuning-jobs create|list|describe|cancel|delete|stream-logs: gcloud's
// `ai hp-tuning-jobs` over the HyperparameterTuningJob REST API (docs/hp-tuning.md).
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "api_client.h"
#include "command_common.h"
#include "commands.h"
#include "hp_tuning_jobs.h"
#include "output_format.h"
#include "resource_commands.h"
#include "spec/job_config_yaml.h"
#include "spec/resource_name.h"

namespace trainyard::cli {

using nlohmann::json;

namespace {

using Common = CommonFlags;

void AddCommon(CLI::App* cmd, Common* c, const std::string& default_format) {
  AddCommonFlags(cmd, c, default_format);
}
std::string Parent(const Common& c) { return ParentName(c); }
std::string JobName(const Common& c, const std::string& job) {
  return ResourceName(c, "hyperparameterTuningJobs", job);
}
StatusOr<std::unique_ptr<ApiClient>> Client(const Common& c) { return ConnectClient(c); }

std::string Id(const std::string& name) { return std::string(spec::LastSegment(name)); }
// "us-central1" from "projects/p/locations/us-central1/hyperparameterTuningJobs/7".
std::string RegionOf(const std::string& name) {
  const std::string marker = "/locations/";
  const size_t at = name.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  return name.substr(start, name.find('/', start) - start);
}

struct HpTuningCreateFlags {
  std::string display_name;
  std::string config_path;
  std::optional<int> max_trial_count;
  std::optional<int> parallel_trial_count;
  std::optional<int> max_failed_trial_count;
  std::string algorithm;
  std::string labels;
};

// The request: the --config file (studySpec, trialJobSpec and optionally the counts), with the
// flags on top, as gcloud does.
StatusOr<json> BuildCreateRequest(const HpTuningCreateFlags& f) {
  std::ifstream in(f.config_path, std::ios::binary);
  if (!in) {
    return InvalidArgumentError("--config: cannot read '" + f.config_path +
                                "'; give a YAML or JSON file with studySpec and trialJobSpec");
  }
  std::stringstream text;
  text << in.rdbuf();
  TY_ASSIGN_OR_RETURN(json config, spec::YamlToJson(text.str()));  // JSON is YAML too
  if (!config.is_object()) {
    return InvalidArgumentError("--config " + f.config_path +
                                ": expected a mapping with studySpec and trialJobSpec");
  }
  for (const char* key : {"studySpec", "trialJobSpec"}) {
    if (!config.contains(key)) {
      return InvalidArgumentError("--config " + f.config_path + ": missing " + key +
                                  " (see docs/hp-tuning.md for an example)");
    }
  }
  json req = config;
  req["displayName"] = f.display_name;
  if (f.max_trial_count) req["maxTrialCount"] = *f.max_trial_count;
  if (f.parallel_trial_count) req["parallelTrialCount"] = *f.parallel_trial_count;
  if (f.max_failed_trial_count) req["maxFailedTrialCount"] = *f.max_failed_trial_count;
  if (!req.contains("maxTrialCount")) req["maxTrialCount"] = 1;  // gcloud's defaults
  if (!req.contains("parallelTrialCount")) req["parallelTrialCount"] = 1;
  if (!f.algorithm.empty()) {
    static const std::map<std::string, std::string> kAlgorithms = {
        {"algorithm-unspecified", "ALGORITHM_UNSPECIFIED"},
        {"grid-search", "GRID_SEARCH"},
        {"random-search", "RANDOM_SEARCH"}};
    std::string key = f.algorithm;
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char ch) { return ch == '_' ? '-' : std::tolower(ch); });
    auto it = kAlgorithms.find(key);
    if (it == kAlgorithms.end()) {
      return InvalidArgumentError("--algorithm: '" + f.algorithm +
                                  "' is not one of algorithm-unspecified (Bayesian), grid-search, "
                                  "random-search");
    }
    req["studySpec"]["algorithm"] = it->second;
  }
  if (!f.labels.empty()) {
    json labels = req.value("labels", json::object());
    std::stringstream ss(f.labels);
    std::string kv;
    while (std::getline(ss, kv, ',')) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos) {
        return InvalidArgumentError("--labels: '" + kv + "' is not KEY=VALUE");
      }
      labels[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    req["labels"] = labels;
  }
  return req;
}

std::string ListTable(const std::vector<json>& jobs) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "DISPLAY_NAME", "STATE", "TRIALS", "BEST", "CREATE_TIME", "CREATOR"}};
  for (const auto& j : jobs) {
    auto trials = j.value("trials", json::array());
    int done = 0;
    for (const auto& t : trials) {
      std::string st = t.value("state", "");
      done += st == "SUCCEEDED" || st == "INFEASIBLE";
    }
    std::string best;
    auto sorted = TrialsBestFirst(j);
    if (!sorted.empty()) {
      if (auto v = TrialFinalValue(j, sorted[0])) {
        std::ostringstream os;
        os << *v << " (trial " << sorted[0].value("id", "") << ")";
        best = os.str();
      }
    }
    rows.push_back({Id(j.value("name", "")), j.value("displayName", ""), j.value("state", ""),
                    std::to_string(done) + "/" + std::to_string(j.value("maxTrialCount", 0)), best,
                    j.value("createTime", ""), CreatorLabel(j)});
  }
  return AlignColumns(rows);
}

}  // namespace

bool IsTerminalJobState(const std::string& state) {
  return state == "JOB_STATE_SUCCEEDED" || state == "JOB_STATE_FAILED" ||
         state == "JOB_STATE_CANCELLED" || state == "JOB_STATE_EXPIRED" ||
         state == "JOB_STATE_PARTIALLY_SUCCEEDED";
}

std::optional<double> TrialFinalValue(const json& job, const json& trial) {
  std::string metric;
  try {
    metric = job.at("studySpec").at("metrics").at(0).at("metricId").get<std::string>();
  } catch (...) {
    return std::nullopt;
  }
  if (!trial.contains("finalMeasurement")) return std::nullopt;
  for (const auto& m : trial["finalMeasurement"].value("metrics", json::array())) {
    if (m.value("metricId", "") == metric && m.contains("value") && m["value"].is_number()) {
      return m["value"].get<double>();
    }
  }
  return std::nullopt;
}

std::vector<json> TrialsBestFirst(const json& job) {
  std::vector<json> trials;
  for (const auto& t : job.value("trials", json::array())) trials.push_back(t);
  bool maximize = true;
  try {
    maximize = job.at("studySpec").at("metrics").at(0).value("goal", "MAXIMIZE") != "MINIMIZE";
  } catch (...) {
  }
  auto id_num = [](const json& t) { return std::atoll(t.value("id", "0").c_str()); };
  std::stable_sort(trials.begin(), trials.end(), [&](const json& a, const json& b) {
    auto va = a.value("state", "") == "SUCCEEDED" ? TrialFinalValue(job, a) : std::nullopt;
    auto vb = b.value("state", "") == "SUCCEEDED" ? TrialFinalValue(job, b) : std::nullopt;
    if (va.has_value() != vb.has_value()) return va.has_value();
    // value_or, not *: gcc 14 takes *optional<double> here for maybe-uninitialized.
    const double x = va.value_or(0), y = vb.value_or(0);
    if (va && x != y) return maximize ? x > y : x < y;
    return id_num(a) < id_num(b);
  });
  return trials;
}

std::string TrialParameters(const json& trial) {
  std::string out;
  for (const auto& p : trial.value("parameters", json::array())) {
    if (!out.empty()) out += " ";
    const json& v = p.contains("value") ? p["value"] : json();
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (v.is_number_float()) {
      // As the trial received it (FormatParameterValue): 16, not 16.0.
      std::ostringstream os;
      os.precision(17);
      double d = v.get<double>();
      if (std::floor(d) == d && std::fabs(d) < 1e15) {
        os << static_cast<int64_t>(d);
        text = os.str();
      }
    }
    out += p.value("parameterId", "") + "=" + text;
  }
  return out;
}

std::string FormatTuningJobTable(const json& job) {
  std::string metric = "METRIC";
  try {
    metric = job.at("studySpec").at("metrics").at(0).at("metricId").get<std::string>();
  } catch (...) {
  }
  std::ostringstream out;
  out << "name: " << job.value("name", "") << "\n"
      << "displayName: " << job.value("displayName", "") << "\n"
      << "state: " << job.value("state", "") << "\n";
  if (const std::string creator = CreatorLabel(job); !creator.empty()) {
    out << "creator: " << creator << "\n";
  }
  if (job.contains("error")) out << "error: " << job["error"].value("message", "") << "\n";
  out << "\n";
  std::vector<std::vector<std::string>> rows = {
      {"TRIAL", "STATE", metric, "STEPS", "PARAMETERS", "NOTE"}};
  for (const auto& t : TrialsBestFirst(job)) {
    std::string value;
    if (auto v = TrialFinalValue(job, t)) {
      std::ostringstream os;
      os << *v;
      value = os.str();
    }
    std::string note = t.value("infeasibleReason", "");
    if (t.value("earlyStopped", false)) note = "early stopped";
    if (note.empty()) note = t.value("stopReason", "");
    rows.push_back({t.value("id", ""), t.value("state", ""), value,
                    std::to_string(t.value("measurements", json::array()).size()),
                    TrialParameters(t), note});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) {
      out << r[i];
      if (i + 1 < r.size()) out << std::string(width[i] - r[i].size() + 2, ' ');
    }
    out << "\n";
  }
  return out.str();
}

StatusOr<json> WaitForTuningJob(ApiClient& client, const std::string& name, double interval_s,
                                bool print_progress) {
  std::string last;
  while (true) {
    TY_ASSIGN_OR_RETURN(json job, client.Call("GET", "/v1/" + name));
    std::string state = job.value("state", "");
    if (print_progress) {
      int done = 0, running = 0;
      for (const auto& t : job.value("trials", json::array())) {
        std::string st = t.value("state", "");
        done += st == "SUCCEEDED" || st == "INFEASIBLE";
        running += st == "ACTIVE" || st == "STOPPING";
      }
      std::string line = state + ": " + std::to_string(done) + "/" +
                         std::to_string(job.value("maxTrialCount", 0)) + " trials done, " +
                         std::to_string(running) + " running";
      if (line != last) std::cerr << line << "\n";
      last = line;
    }
    if (IsTerminalJobState(state)) return job;
    std::this_thread::sleep_for(std::chrono::duration<double>(interval_s));
  }
}

namespace {

void RegisterCreate(CLI::App* jobs, int* exit_code) {
  auto* cmd = jobs->add_subcommand("create", "Create a hyperparameter tuning job");
  auto c = std::make_shared<Common>();
  auto f = std::make_shared<HpTuningCreateFlags>();
  AddCommon(cmd, c.get(), "");
  cmd->add_option("--display-name", f->display_name, "Display name of the job")->required();
  cmd->add_option("--config", f->config_path,
                  "YAML or JSON file with studySpec and trialJobSpec (Vertex's shape)")
      ->required();
  cmd->add_option("--max-trial-count", f->max_trial_count, "Trials to run in total (default 1)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--parallel-trial-count", f->parallel_trial_count,
                  "Trials running at once (default 1)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--max-failed-trial-count", f->max_failed_trial_count,
                  "Failed trials before the job fails (0: trainyard decides)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--algorithm", f->algorithm,
                  "algorithm-unspecified (Bayesian optimisation), grid-search or random-search");
  cmd->add_option("--labels", f->labels, "Comma-separated KEY=VALUE labels");
  cmd->callback(Command("trainyard.ai.hp-tuning-jobs.create", exit_code, [c, f]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, Client(*c));
    TY_ASSIGN_OR_RETURN(json request, BuildCreateRequest(*f));
    std::cerr << "Using endpoint [" << client->endpoint() << "]\n";
    TY_ASSIGN_OR_RETURN(
        json job,
        client->Call("POST", "/v1/" + Parent(*c) + "/hyperparameterTuningJobs", request.dump()));
    std::string name = job.value("name", "");
    // As gcloud prints it: the id, the describe command with its region, the state; stdout
    // stays empty unless --format asks (--format='value(name)' for scripts).
    std::cerr << "Hyperparameter tuning job [" << Id(name) << "] submitted successfully.\n\n"
              << "Your job is still active. You may view the status of your job with the "
                 "command\n\n  $ trainyard ai hp-tuning-jobs describe "
              << Id(name) << " --region=" << RegionOf(name)
              << "\n\nJob State: " << job.value("state", "JOB_STATE_UNSPECIFIED") << "\n";
    if (c->format == "table") {
      std::cout << FormatTuningJobTable(job);
    } else if (!c->format.empty()) {
      TY_ASSIGN_OR_RETURN(std::string text, FormatResources({job}, c->format, false));
      std::cout << text;
    }
    return Status::Ok();
  }));
}

// Prints the lines of trial `id`'s CustomJob `trial_job` logged after *after and moves *after
// on. Returns whether that log is complete (the job ended and every line was read).
StatusOr<bool> PrintTrialLogPage(ApiClient& client, const std::string& id,
                                 const std::string& trial_job, std::string* after) {
  TY_ASSIGN_OR_RETURN(json page, client.Call("GET", "/v1/" + trial_job + ":logs?after=" + *after +
                                                        "&pageSize=1000&waitSeconds=0"));
  for (const auto& e : page["entries"]) {
    std::cout << "[trial " << id << " " << e.value("taskName", "") << "] " << e.value("text", "")
              << "\n";
  }
  std::cout << std::flush;
  *after = page.value("nextCursor", *after);
  return page.value("done", false);
}

// Polls tuning job `name` every `interval_s` and prints its trials' logs (only `trial_id`'s
// when set) until the job ended and every log is read, or until that one trial's is. Sets
// *exit_code to 1 when the job ended other than SUCCEEDED.
Status StreamTuningJobLogs(ApiClient& client, const std::string& name, const std::string& trial_id,
                           double interval_s, int* exit_code) {
  std::map<std::string, std::string> cursors;  // trial job -> cursor
  std::set<std::string> finished;              // trial jobs fully read
  bool found_trial = trial_id.empty();
  while (true) {
    TY_ASSIGN_OR_RETURN(json job, client.Call("GET", "/v1/" + name));
    bool job_ended = IsTerminalJobState(job.value("state", ""));
    bool all_read = true;
    for (const auto& t : job.value("trials", json::array())) {
      std::string id = t.value("id", "");
      std::string trial_job = t.value("customJob", "");
      if ((!trial_id.empty() && id != trial_id) || trial_job.empty()) continue;
      found_trial = true;
      if (finished.count(trial_job)) continue;
      std::string& after = cursors.try_emplace(trial_job, "-1").first->second;
      TY_ASSIGN_OR_RETURN(bool done, PrintTrialLogPage(client, id, trial_job, &after));
      if (done) {
        finished.insert(trial_job);
      } else {
        all_read = false;
      }
    }
    if (!found_trial && job_ended) {
      return NotFoundError("--trial-id: trial '" + trial_id + "' is not in " + name);
    }
    if (job_ended && all_read) {
      std::string state = job.value("state", "");
      std::cerr << "Hyperparameter tuning job [" << name << "] ended in state " << state;
      if (job.contains("error")) std::cerr << ": " << job["error"].value("message", "");
      std::cerr << "\n";
      if (state != "JOB_STATE_SUCCEEDED") *exit_code = 1;
      return Status::Ok();
    }
    if (!trial_id.empty() && found_trial && all_read) {
      // The one trial ended; the study may go on without it.
      return Status::Ok();
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(interval_s));
  }
}

void RegisterStreamLogs(CLI::App* jobs, int* exit_code) {
  auto* cmd = jobs->add_subcommand(
      "stream-logs", "Stream the logs of a tuning job's trials (or one trial) until it ends");
  auto c = std::make_shared<Common>();
  auto ref = std::make_shared<std::string>();
  auto trial_id = std::make_shared<std::string>();
  auto interval = std::make_shared<double>(1.0);
  AddCommon(cmd, c.get(), "");
  cmd->add_option("JOB", *ref, "Job id or full name")->required();
  cmd->add_option("--trial-id", *trial_id, "Only this trial's logs");
  cmd->add_option("--polling-interval", *interval, "Seconds between polls")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->callback(Command("trainyard.ai.hp-tuning-jobs.stream-logs", exit_code,
                        [c, ref, trial_id, interval, exit_code]() -> Status {
                          TY_ASSIGN_OR_RETURN(auto client, Client(*c));
                          return StreamTuningJobLogs(*client, JobName(*c, *ref), *trial_id,
                                                     *interval, exit_code);
                        }));
}

}  // namespace

void RegisterHpTuningJobsCommands(CLI::App& ai, int* exit_code) {
  CLI::App* jobs =
      ai.add_subcommand("hp-tuning-jobs", "Create and manage hyperparameter tuning jobs");
  jobs->require_subcommand(1);
  RegisterCreate(jobs, exit_code);

  // describe (default: the trials best first), list, cancel, delete: the shared verbs.
  CliResource resource;
  resource.command = "trainyard.ai.hp-tuning-jobs";
  resource.collection = "hyperparameterTuningJobs";
  resource.noun = "hyperparameter tuning job";
  resource.describe_format = "table";
  resource.formats = {{"table", [](const std::vector<json>& items, bool as_list) {
                         return as_list || items.size() != 1 ? ListTable(items)
                                                             : FormatTuningJobTable(items[0]);
                       }}};
  RegisterResourceVerbs(jobs, resource, kDescribe | kList | kCancel | kDelete, exit_code);

  RegisterStreamLogs(jobs, exit_code);
}

}  // namespace trainyard::cli
