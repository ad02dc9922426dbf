// End-to-end HP tuning: the real `trainyard` server (LocalExecutor) runs a study over
// test/objectives/linear_objective.sh with parallel trials, a failing trial, median early
// stopping, and a kill -9 + restart of the server in the middle; driven by the real CLI.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;

constexpr const char* kParent = "projects/local/locations/us-central1";

class HpTuningE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveLocalExecutor()) GTEST_SKIP() << "needs the local executor";
    dir_ = testing::MakeTestDir();
    std::filesystem::create_directories(dir_ / "buckets" / "hpt");  // the study's bucket
    StartServer();
  }

  void StartServer() {
    std::string error;
    server_ = ServerProcess::Start(dir_ / "data",
                                   {"--executor", "local", "--kill-grace-seconds", "2", "--gpus",
                                    "0", "--cpus", "64", "--memory-gib", "256"},
                                   &error, Env());
    ASSERT_NE(server_, nullptr) << error;
  }

  std::vector<std::string> Env() const {
    return {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()};
  }

  json Get(const std::string& name) { return Http(server_->port(), "GET", "/v1/" + name).body; }

  // Polls until `done(job)` or the timeout; returns the last job.
  template <typename Fn>
  json WaitUntil(const std::string& name, Fn done, int timeout_s = 60) {
    json job;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      job = Get(name);
      if (done(job)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return job;
  }

  std::filesystem::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

// Grid over x = 1..6, MINIMIZE x + 1/step: later trials are worse, so once three trials have
// completed the median rule stops the rest. Trial 2 crashes (FAIL_TRIAL=2).
std::string StudyYaml(const std::string& objective) {
  return R"(studySpec:
  metrics:
  - metricId: objective
    goal: MINIMIZE
  parameters:
  - parameterId: x
    discreteValueSpec:
      values: [1, 2, 3, 4, 5, 6]
  algorithm: GRID_SEARCH
  medianAutomatedStoppingSpec: {}
trialJobSpec:
  workerPoolSpecs:
  - machineSpec:
      machineType: n1-standard-4
    replicaCount: 1
    containerSpec:
      imageUri: local
      command: [bash, )" +
         objective + R"(]
      args: [--steps=16, --step-seconds=0.25]
      env:
      - name: FAIL_TRIAL
        value: "2"
  baseOutputDirectory:
    outputUriPrefix: gs://hpt/out
)";
}

TEST_F(HpTuningE2ETest, StudyWithFailureEarlyStoppingAndServerRestart) {
  const auto config = dir_ / "study.yaml";
  std::ofstream(config) << StudyYaml(testing::SourcePath("test/objectives/linear_objective.sh"));
  auto created =
      Cli(server_->endpoint(),
          {"ai", "hp-tuning-jobs", "create", "--display-name=toy", "--config=" + config.string(),
           "--max-trial-count=6", "--parallel-trial-count=2", "--max-failed-trial-count=2",
           "--format=value(name)"},
          Env());
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string name = created.out.substr(0, created.out.find('\n'));
  ASSERT_TRUE(name.starts_with(std::string(kParent) + "/hyperparameterTuningJobs/")) << name;
  // gcloud's lines: the id, describe with the region, the state.
  const std::string id = name.substr(name.rfind('/') + 1);
  EXPECT_NE(created.err.find("Hyperparameter tuning job [" + id +
                             "] submitted successfully.\n\nYour job is still active. You may "
                             "view the status of your job with the command\n\n  $ trainyard ai "
                             "hp-tuning-jobs describe " +
                             id + " --region="),
            std::string::npos)
      << created.err;
  EXPECT_NE(created.err.find("\n\nJob State: JOB_STATE_"), std::string::npos) << created.err;

  // Kill -9 the server while trial 3 runs; its process keeps running and is re-adopted.
  json mid = WaitUntil(name, [](const json& j) {
    for (const auto& t : j.value("trials", json::array())) {
      if (t["id"] == "3" && t["state"] == "ACTIVE") return true;
    }
    return false;
  });
  ASSERT_EQ(mid["state"], "JOB_STATE_RUNNING") << mid.dump(2);
  server_->Kill(SIGKILL);
  server_.reset();
  StartServer();

  json job = WaitUntil(name, [](const json& j) {
    std::string s = j.value("state", "");
    return s == "JOB_STATE_SUCCEEDED" || s == "JOB_STATE_FAILED" || s == "JOB_STATE_CANCELLED";
  });
  // Trial id: x, state, and how it ended.
  std::string trials;
  int early_stopped = 0;
  for (const auto& t : job.value("trials", json::array())) {
    trials += t["id"].get<std::string>() + ":x=" + t["parameters"][0]["value"].dump() + ":" +
              t["state"].get<std::string>() + (t.value("jobFailed", false) ? ":failed" : "") + " ";
    early_stopped += t.value("earlyStopped", false);
  }
  EXPECT_EQ(trials,
            "1:x=1.0:SUCCEEDED 2:x=2.0:INFEASIBLE:failed 3:x=3.0:SUCCEEDED 4:x=4.0:SUCCEEDED "
            "5:x=5.0:SUCCEEDED 6:x=6.0:SUCCEEDED ")
      << job.dump(2) << server_->Stderr();
  EXPECT_GE(early_stopped, 1) << job.dump(2);
  // elapsedDuration comes only from the hypertune file's timestamps (not the stdout fallback).
  EXPECT_TRUE(job["trials"][0]["measurements"][0].contains("elapsedDuration")) << job.dump(2);
  EXPECT_EQ(job["state"], "JOB_STATE_SUCCEEDED");

  // describe: trials best first (trial 1: x=1 minimises), with the trial's per-trial output dir.
  auto described = Cli(server_->endpoint(), {"ai", "hp-tuning-jobs", "describe", name}, Env());
  ASSERT_EQ(described.exit_code, 0) << described.err;
  std::string table = described.out.substr(described.out.find("TRIAL"));
  std::string second_line = table.substr(table.find('\n') + 1);
  EXPECT_EQ(second_line.substr(0, second_line.find(' ')), "1") << described.out;
  std::ifstream model(dir_ / "buckets" / "hpt" / "out" / "1" / "model" / "model.txt");
  std::string model_text;
  std::getline(model, model_text);
  EXPECT_EQ(model_text, "x=1") << "AIP_MODEL_DIR gets a <trial_id>/ level";

  auto logs = Cli(server_->endpoint(),
                  {"ai", "hp-tuning-jobs", "stream-logs", name, "--trial-id=1"}, Env());
  EXPECT_NE(logs.out.find("[trial 1 workerpool0-0] trial 1 done"), std::string::npos)
      << logs.out << logs.err;
}

}  // namespace
}  // namespace trainyard::e2e

namespace trainyard::e2e {
namespace {

// `hp-tuning-jobs list --filter` goes to the server, which applies the custom-jobs filter syntax.
TEST_F(HpTuningE2ETest, ListFiltersOnTheServer) {
  const auto config = dir_ / "study.yaml";
  std::ofstream(config) << StudyYaml(testing::SourcePath("test/objectives/linear_objective.sh"));
  std::vector<std::string> names;
  for (std::string labels : {"team=nlp", "team=cv"}) {
    auto created =
        Cli(server_->endpoint(),
            {"ai", "hp-tuning-jobs", "create", "--display-name=study-" + labels,
             "--labels=" + labels, "--config=" + config.string(), "--format=value(name)"},
            Env());
    ASSERT_EQ(created.exit_code, 0) << created.err;
    names.push_back(created.out.substr(0, created.out.find('\n')));
  }
  ASSERT_EQ(Cli(server_->endpoint(), {"ai", "hp-tuning-jobs", "cancel", names[1]}, Env()).exit_code,
            0);
  // CANCELLING until its running trial has stopped.
  WaitUntil(names[1], [](const json& j) { return j.value("state", "") == "JOB_STATE_CANCELLED"; });
  auto list = [&](const std::string& filter) {
    auto r = Cli(server_->endpoint(),
                 {"ai", "hp-tuning-jobs", "list", "--format=json", "--filter=" + filter}, Env());
    if (r.exit_code != 0) return "exit " + std::to_string(r.exit_code) + ": " + r.err;
    std::string out;
    for (const auto& j : json::parse(r.out)) out += j["displayName"].get<std::string>() + " ";
    return out;
  };
  std::string bad = list("labels.team=nlp AND");
  EXPECT_EQ(list("labels.team=nlp") + "| " + list("state=JOB_STATE_CANCELLED") + "| " +
                list("display_name:\"study-*\"") + "| " + bad.substr(0, bad.find(" at ")),
            "study-team=nlp | study-team=cv | study-team=cv study-team=nlp | exit 1: ERROR: "
            "(trainyard.ai.hp-tuning-jobs.list) INVALID_ARGUMENT: filter: expected a field name, "
            "got end of filter");
  (void)Cli(server_->endpoint(), {"ai", "hp-tuning-jobs", "cancel", names[0]}, Env());
}

TEST_F(HpTuningE2ETest, InvalidRequestsNameTheFieldAndTheFix) {
  json body = {
      {"displayName", "bad"},
      {"maxTrialCount", 2},
      {"parallelTrialCount", 1},
      {"studySpec",
       {{"metrics", {{{"metricId", "m"}, {"goal", "MAXIMIZE"}}}},
        {"parameters",
         {{{"parameterId", "x"}, {"doubleValueSpec", {{"minValue", 0}, {"maxValue", 1}}}}}}}},
      {"trialJobSpec", {{"workerPoolSpecs", json::array()}}}};
  auto r = Http(server_->port(), "POST",
                std::string("/v1/") + kParent + "/hyperparameterTuningJobs", body.dump());
  std::string message = r.body["error"].value("message", "");
  // An empty workerPoolSpecs list is an empty (so absent, in proto3 JSON) trialJobSpec.
  EXPECT_EQ(std::to_string(r.status) + " " + message.substr(0, message.find(':')),
            "400 trialJobSpec")
      << r.body.dump(2);
  EXPECT_NE(message.find("workerPoolSpecs"), std::string::npos) << message;

  const auto config = dir_ / "no_trial_spec.yaml";
  std::ofstream(config) << "studySpec:\n  metrics: []\n";
  auto cli = Cli(
      server_->endpoint(),
      {"ai", "hp-tuning-jobs", "create", "--display-name=x", "--config=" + config.string()}, Env());
  EXPECT_NE(cli.err.find("missing trialJobSpec"), std::string::npos) << cli.err;
  EXPECT_EQ(cli.exit_code, 2);
}

}  // namespace
}  // namespace trainyard::e2e
