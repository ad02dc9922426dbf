// trainyard automl text-classification: the "AutoML" row of the design notes for our task — a
// hyperparameter tuning job over the native BERT trainer with a preset search space, ending with
// the best trial's model exported (docs/hp-tuning.md#automl).
//
// Steps: `trainyard-bert make-splits` on --training-data into gs://BUCKET/<run>/data/ (the bucket
// root the server's trials also see), a HyperparameterTuningJob over image
// trainyard/bert-sentiment maximising the trainer's validation `accuracy`, wait, then copy
// gs://BUCKET/<run>/trials/<best trial>/model/ to --output atomically.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api_client.h"
#include "command_common.h"
#include "commands.h"
#include "common/bucket_path.h"
#include "common/exit_code.h"
#include "common/file_util.h"
#include "hp_tuning_jobs.h"
#include "spec/resource_name.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct AutomlFlags {
  std::string endpoint;
  std::string project = "local";
  std::string region = "us-central1";
  std::string training_data;
  std::string target_column;
  std::string text_column = "text";
  int budget_trials = 0;
  int parallel_trials = 1;
  int max_epochs = 3;
  int max_trainable_layers = 2;
  std::string output = "automl-model";
  std::string bucket = "trainyard-automl";
  std::string display_name;
  std::string vocab;
  std::string model_dir;
  std::string machine_type = "n1-standard-4";
  std::string algorithm = "ALGORITHM_UNSPECIFIED";
  int max_length = 128;
  std::vector<std::string> extra_args;
  double poll_seconds = 2;
};

// trainyard-bert: $TRAINYARD_BERT, else next to this binary, else on PATH.
std::string TrainyardBert() {
  if (const char* env = std::getenv("TRAINYARD_BERT"); env && *env) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::exists(self.parent_path() / "trainyard-bert")) {
    return (self.parent_path() / "trainyard-bert").string();
  }
  return "trainyard-bert";
}

struct ProcessOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs argv (argv[0] looked up in PATH) with output captured in a temp file.
StatusOr<ProcessOutput> RunChildProcess(const std::vector<std::string>& argv) {
  char path[] = "/tmp/trainyard-automl-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) return IoError("cannot create a temp file for " + argv[0] + "'s output");
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    return IoError("cannot start " + argv[0]);
  }
  if (pid == 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::string msg = "cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessOutput out;
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  out.output = text.str();
  ::unlink(path);
  return out;
}

std::string Absolute(const std::string& path) {
  if (path.empty() || IsGcsUri(path)) return path;
  return fs::absolute(path).lexically_normal().string();
}

// The preset search space (documented in docs/hp-tuning.md).
json PresetStudySpec(const AutomlFlags& f) {
  json spec = json{
      {"metrics", {{{"metricId", "accuracy"}, {"goal", "MAXIMIZE"}}}},
      {"parameters",
       {{{"parameterId", "learning-rate"},
         {"doubleValueSpec", {{"minValue", 1e-5}, {"maxValue", 1e-3}}},
         {"scaleType", "UNIT_LOG_SCALE"}},
        {{"parameterId", "batch-size"}, {"discreteValueSpec", {{"values", {16, 32, 64, 128}}}}},
        {{"parameterId", "epochs"},
         {"integerValueSpec", {{"minValue", "1"}, {"maxValue", std::to_string(f.max_epochs)}}}},
        {{"parameterId", "warmup-steps"},
         {"integerValueSpec", {{"minValue", "0"}, {"maxValue", "200"}}}},
        {{"parameterId", "trainable-layers"},
         {"integerValueSpec",
          {{"minValue", "0"}, {"maxValue", std::to_string(f.max_trainable_layers)}}}}}},
      {"algorithm", f.algorithm},
      {"measurementSelectionType", "BEST_MEASUREMENT"}};
  // Freezing layers is transfer learning: it only makes sense on top of pretrained weights. A
  // randomly initialised encoder must train whole, so without --model-dir the parameter is left
  // out (the trainer's default, all layers trainable).
  if (f.model_dir.empty()) {
    auto& params = spec["parameters"];
    params.erase(params.end() - 1);
  }
  return spec;
}

Status CopyTree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  if (ec)
    return IoError("cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
  return Status::Ok();
}

// Step 1: `trainyard-bert make-splits` into base/data, the bucket root every trial reads.
Status SplitTrainingData(const AutomlFlags& f, const std::string& base) {
  std::vector<std::string> argv = {TrainyardBert(),  "make-splits",   "--output-dir",
                                   base + "/data",   "--text-column", f.text_column,
                                   "--label-column", f.target_column, Absolute(f.training_data)};
  std::cerr << "Splitting " << f.training_data << " into " << base << "/data ...\n";
  TY_ASSIGN_OR_RETURN(ProcessOutput split, RunChildProcess(argv));
  if (split.exit_code != 0) {
    return InvalidArgumentError("make-splits failed (exit " + std::to_string(split.exit_code) +
                                "): " + split.output);
  }
  std::cerr << split.output;
  return Status::Ok();
}

// Step 2's request: the preset study over trainyard/bert-sentiment trials reading base/data.
json TuningJobRequest(const AutomlFlags& f, const std::string& run, const std::string& base) {
  json args = {"--training-file=" + base + "/data/train.csv",
               "--validation-file=" + base + "/data/eval.csv",
               "--testing-file=" + base + "/data/test.csv",
               "--text-column=" + f.text_column,
               "--label-column=Target",
               "--max-length=" + std::to_string(f.max_length)};
  if (!f.vocab.empty()) args.push_back("--vocab=" + Absolute(f.vocab));
  if (!f.model_dir.empty()) args.push_back("--model-dir=" + Absolute(f.model_dir));
  for (const auto& a : f.extra_args) args.push_back(a);
  return {{"displayName", f.display_name.empty() ? run : f.display_name},
          {"studySpec", PresetStudySpec(f)},
          {"maxTrialCount", f.budget_trials},
          {"parallelTrialCount", f.parallel_trials},
          {"trialJobSpec",
           {{"workerPoolSpecs",
             {{{"machineSpec", {{"machineType", f.machine_type}}},
               {"replicaCount", 1},
               {"containerSpec", {{"imageUri", "trainyard/bert-sentiment"}, {"args", args}}}}}},
            {"baseOutputDirectory", {{"outputUriPrefix", base + "/trials"}}}}}};
}

// Step 3: copies the best trial's model of ended tuning job `job` (named `name`) to --output
// atomically and prints what was exported. Sets *exit_code to 1 when no trial succeeded.
Status ExportBestTrial(const AutomlFlags& f, const json& job, const std::string& name,
                       const std::string& base, int* exit_code) {
  auto trials = TrialsBestFirst(job);
  if (trials.empty() || !TrialFinalValue(job, trials[0]) ||
      trials[0].value("state", "") != "SUCCEEDED") {
    *exit_code = 1;
    return FailedPreconditionError(
        "no trial succeeded with an accuracy (job " + name + " is " + job.value("state", "") +
        (job.contains("error") ? ": " + job["error"].value("message", "") : "") +
        "); see `trainyard ai hp-tuning-jobs stream-logs " + name + "`");
  }
  const json& best = trials[0];
  TY_ASSIGN_OR_RETURN(fs::path model,
                      ResolveStoragePath(base + "/trials/" + best.value("id", "") + "/model"));
  if (!fs::exists(model / "config.json")) {
    return FailedPreconditionError("the best trial (" + best.value("id", "") +
                                   ") has no exported model in " + model.string() +
                                   " (was it stopped before exporting?)");
  }
  TY_ASSIGN_OR_RETURN(fs::path output, ResolveStoragePath(f.output));
  output = fs::absolute(output);
  TY_RETURN_IF_ERROR(MakeDirs(output.parent_path()));
  TY_ASSIGN_OR_RETURN(fs::path staging, MakeStagingDir(output));
  TY_RETURN_IF_ERROR(CopyTree(model, staging));
  TY_RETURN_IF_ERROR(CommitDirectory(staging, output));
  std::cout << "best trial: " << best.value("id", "") << "\n"
            << "accuracy: " << *TrialFinalValue(job, best) << "\n"
            << "parameters: " << TrialParameters(best) << "\n"
            << "model: " << f.output << "\n"
            << "tuning job: " << name << "\n";
  return Status::Ok();
}

Status RunAutoml(const AutomlFlags& f, int* exit_code) {
  if (!fs::exists(f.training_data) && !IsGcsUri(f.training_data)) {
    return InvalidArgumentError("--training-data: '" + f.training_data + "' does not exist");
  }
  if (f.vocab.empty() && f.model_dir.empty()) {
    return InvalidArgumentError(
        "--vocab or --model-dir: the trainer needs a WordPiece vocab.txt (or a pretrained HF "
        "model dir containing one), e.g. --vocab data/sample/vocab.txt");
  }
  TY_ASSIGN_OR_RETURN(auto client, ApiClient::Connect(ResolveEndpoint(f.endpoint)));
  const std::string run =
      "automl-" + std::to_string(::time(nullptr)) + "-" + std::to_string(::getpid());
  const std::string base = "gs://" + f.bucket + "/" + run;
  TY_RETURN_IF_ERROR(SplitTrainingData(f, base));

  const std::string parent = spec::LocationName{f.project, f.region}.ToString();
  TY_ASSIGN_OR_RETURN(json job, client->Call("POST", "/v1/" + parent + "/hyperparameterTuningJobs",
                                             TuningJobRequest(f, run, base).dump()));
  const std::string name = job.value("name", "");
  std::cerr << "Hyperparameter tuning job [" << name << "] submitted: " << f.budget_trials
            << " trials, " << f.parallel_trials << " at a time.\n";
  TY_ASSIGN_OR_RETURN(job, WaitForTuningJob(*client, name, f.poll_seconds, true));
  std::cerr << FormatTuningJobTable(job);
  return ExportBestTrial(f, job, name, base, exit_code);
}

}  // namespace

void RegisterAutomlCommands(CLI::App& app, int* exit_code) {
  CLI::App* automl = app.add_subcommand("automl", "AutoML presets over hyperparameter tuning");
  automl->require_subcommand(1);
  auto* cmd = automl->add_subcommand(
      "text-classification",
      "Tune the native BERT trainer on a CSV (preset search space) and export the best model");
  auto f = std::make_shared<AutomlFlags>();
  cmd->add_option("--training-data", f->training_data, "CSV with a text and a label column")
      ->required();
  cmd->add_option("--target-column", f->target_column, "Column with the class labels")->required();
  cmd->add_option("--text-column", f->text_column, "Column with the text")->capture_default_str();
  cmd->add_option("--budget-trials", f->budget_trials, "Trials to run in total")
      ->required()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--parallel-trials", f->parallel_trials, "Trials at once")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--output", f->output, "Where the best model goes (directory or gs://...)")
      ->capture_default_str();
  cmd->add_option("--vocab", f->vocab, "WordPiece vocab.txt for the trainer");
  cmd->add_option("--model-dir", f->model_dir, "Pretrained HF BERT dir to fine-tune");
  cmd->add_option("--max-epochs", f->max_epochs, "Upper bound of the epochs parameter")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--max-trainable-layers", f->max_trainable_layers,
                  "Upper bound of trainable-layers (the model's encoder layer count)")
      ->check(CLI::Range(0, 48))
      ->capture_default_str();
  cmd->add_option("--max-length", f->max_length, "Max tokens per text")->capture_default_str();
  cmd->add_option("--algorithm", f->algorithm,
                  "ALGORITHM_UNSPECIFIED (Bayesian), RANDOM_SEARCH or GRID_SEARCH")
      ->check(CLI::IsMember({"ALGORITHM_UNSPECIFIED", "RANDOM_SEARCH", "GRID_SEARCH"}))
      ->capture_default_str();
  cmd->add_option(
      "--trainer-arg", f->extra_args,
      "Extra trainer argument for every trial (repeatable), e.g. --trainer-arg=--threads=1");
  cmd->add_option("--bucket", f->bucket, "Bucket for the splits and trial outputs")
      ->capture_default_str();
  cmd->add_option("--machine-type", f->machine_type, "Machine type of each trial")
      ->capture_default_str();
  cmd->add_option("--display-name", f->display_name, "Display name of the tuning job");
  cmd->add_option("--endpoint", f->endpoint, "Server URL");
  cmd->add_option("--project", f->project, "Project")->capture_default_str();
  cmd->add_option("--region", f->region, "Location")->capture_default_str();
  cmd->add_option("--poll-seconds", f->poll_seconds, "Seconds between status polls")
      ->check(CLI::Range(0.1, 600.0));
  cmd->callback([f, exit_code] {
    if (CheckCommandLineOnly()) return;
    Status s = RunAutoml(*f, exit_code);
    if (!s.ok()) {
      PrintError("trainyard.automl.text-classification", s.ToString());
      *exit_code = ExitCodeFor(s);
    }
  });
}

}  // namespace trainyard::cli
