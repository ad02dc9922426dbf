// Endpoints and online prediction on the real server, with real serving replicas
// (`trainyard-bert serve`, custom jobs of the local executor):
//  - Google's gcloud, unchanged: a model a training pipeline trained (the real trainer) is
//    deployed, predicts the labels `trainyard-bert predict` gives the same texts, raw-predicts,
//    gets a second deployed model and a traffic split, is updated, undeployed and deleted;
//  - `trainyard ai endpoints`, spelled as gcloud spells it;
//  - kill -9 of the server with a live deployment, and of a serving replica;
//  - refusals: a model Trainyard cannot serve, bad traffic splits, hostile bodies on every new
//    route.
// Skipped without gcloud (its test only), the local executor, trainyard-bert.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kParent = "projects/p1/locations/us-central1";
constexpr const char* kPrebuiltPytorch =
    "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest";
constexpr const char* kCustomTask =
    "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml";
const std::vector<std::string> kTexts = {"good movie", "the bad movie"};

class EndpointsE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveLocalExecutor() || !fs::exists(testing::ToolPath("trainyard-bert"))) {
      GTEST_SKIP() << "needs the local executor and trainyard-bert";
    }
    dir_ = testing::MakeTestDir();
    fs::create_directories(dir_ / "buckets/bkt");
    testing::WriteFileOrDie(dir_ / "vocab.txt",
                            "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\nmovie\nthe\n");
    std::string csv = "bodyText,Target\n";
    for (int i = 0; i < 64; ++i) csv += i % 2 ? "good movie,1\n" : "the bad movie,0\n";
    testing::WriteFileOrDie(dir_ / "buckets/bkt/train.csv", csv);
    env_ = {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string(),
            "PATH=" + testing::ToolPath("trainyard-bert").parent_path().string() + ":" +
                std::getenv("PATH")};
    StartServer();
  }

  void TearDown() override {
    // Serving replicas outlive their server (a restarted one re-adopts them).
    server_.reset();
    if (!dir_.empty()) EndReplicas(dir_ / "data");
  }

  void StartServer() {
    std::string error;
    server_ =
        ServerProcess::Start(dir_ / "data", {"--executor", "local", "--gpus", "0"}, &error, env_);
    ASSERT_NE(server_, nullptr) << error;
  }

  // The trainer's arguments, the data at `data` (gs://bkt or its local directory).
  std::vector<std::string> TrainArgs(const std::string& data) const {
    return {"--training-file=" + data + "/train.csv",
            "--validation-file=" + data + "/train.csv",
            "--vocab=" + (dir_ / "vocab.txt").string(),
            "--epochs=10",
            "--batch-size=8",
            "--learning-rate=5e-4",
            "--threads=1"};
  }

  // Trains into gs://bkt/<dir> with trainyard-bert directly.
  void TrainInto(const std::string& dir) {
    const fs::path bucket = dir_ / "buckets/bkt";
    std::vector<std::string> argv = {testing::ToolPath("trainyard-bert").string(), "train",
                                     "--job-dir=" + (bucket / dir).string()};
    for (const std::string& a : TrainArgs(bucket.string())) argv.push_back(a);
    auto r = testing::RunProcess(argv, "", env_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Uploads gs://bkt/<dir> as a model served by `image`; returns its name.
  std::string Upload(const std::string& dir, const std::string& image = kPrebuiltPytorch) {
    json body = {{"model",
                  {{"displayName", dir},
                   {"artifactUri", "gs://bkt/" + dir},
                   {"containerSpec", {{"imageUri", image}}}}}};
    auto r = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/models:upload",
                  body.dump());
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body["response"].value("model", "");
  }

  std::string CreateEndpoint(const std::string& display_name) {
    auto r = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/endpoints",
                  json{{"displayName", display_name}}.dump());
    EXPECT_EQ(r.status, 200) << r.body.dump();
    EXPECT_TRUE(r.body.value("done", false)) << r.body.dump();
    return r.body["response"].value("name", "");
  }

  // Deploys through REST and waits for the operation; returns the operation as it ended.
  json Deploy(const std::string& endpoint, const std::string& model, const json& split = nullptr) {
    json body = {
        {"deployedModel",
         {{"model", model},
          {"dedicatedResources",
           {{"machineSpec", {{"machineType", "n1-standard-1"}}}, {"minReplicaCount", 1}}}}}};
    if (!split.is_null()) body["trafficSplit"] = split;
    auto r = Http(server_->port(), "POST", "/v1/" + endpoint + ":deployModel", body.dump());
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return WaitOperation(r.body);
  }

  json WaitOperation(json op) {
    for (int i = 0; i < 600 && !op.value("done", false); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      op = Http(server_->port(), "GET", "/v1/" + op.value("name", "")).body;
    }
    return op;
  }

  HttpResult Predict(const std::string& endpoint, const std::string& body) {
    return Http(server_->port(), "POST", "/v1/" + endpoint + ":predict", body);
  }

  // The labels `trainyard-bert predict` gives kTexts with the model at gs://bkt/<dir>.
  std::vector<std::string> ReferenceLabels(const std::string& artifact_uri) {
    std::vector<std::string> labels;
    for (const std::string& text : kTexts) {
      auto r = testing::RunProcess({testing::ToolPath("trainyard-bert").string(), "predict",
                                    "--model-dir", artifact_uri, "--text", text, "--threads", "1"},
                                   "", env_);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      json line = json::parse(r.out.substr(0, r.out.find('\n')), nullptr, false);
      labels.push_back(line.is_object() ? line.value("label", "?") : "?");
    }
    return labels;
  }

  fs::path dir_;
  std::vector<std::string> env_;
  std::unique_ptr<ServerProcess> server_;
};

std::vector<std::string> LabelsOf(const json& predictions) {
  std::vector<std::string> out;
  for (const json& p : predictions) out.push_back(p.is_object() ? p.value("label", "?") : "?");
  return out;
}

// The pid of the serving process of `endpoint_id` (its AIP_ENDPOINT_ID), 0 when none runs.
pid_t ServingPid(const std::string& endpoint_id) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string argv0;
    std::getline(cmdline, argv0, '\0');
    if (argv0.find("trainyard-bert") == std::string::npos) continue;
    std::ifstream environ(entry.path() / "environ");
    std::string var;
    while (std::getline(environ, var, '\0')) {
      if (var == "AIP_ENDPOINT_ID=" + endpoint_id) return std::stoi(pid);
    }
  }
  return 0;
}

std::string Id(const std::string& name) { return name.substr(name.rfind('/') + 1); }

class GcloudEndpointsTest : public EndpointsE2ETest {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/bin/gcloud")) {
      GTEST_SKIP() << "gcloud is not installed (/usr/bin/gcloud): Google Cloud CLI tests skipped";
    }
    EndpointsE2ETest::SetUp();
  }

  testing::ProcessResult Gcloud(std::vector<std::string> args) {
    args.insert(args.begin(), "gcloud");
    args.push_back("--region=us-central1");
    return testing::RunProcess(
        args, "",
        {"CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM=" + server_->endpoint() + "/",
         "CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true", "CLOUDSDK_CORE_PROJECT=p1",
         "CLOUDSDK_CONFIG=" + (dir_ / "gcloud-config").string(), "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
         "CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=1",
         "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=1"});
  }

  // A TrainingPipeline runs the trainer (trainyard/bert-sentiment) and registers its model with
  // Vertex's prebuilt PyTorch prediction image; returns the model's name.
  std::string TrainWithPipeline() {
    json body = {
        {"displayName", "bert"},
        {"trainingTaskDefinition", kCustomTask},
        {"trainingTaskInputs",
         {{"workerPoolSpecs",
           {{{"machineSpec", {{"machineType", "n1-standard-2"}}},
             {"replicaCount", 1},
             {"containerSpec",
              {{"imageUri", "trainyard/bert-sentiment"}, {"args", TrainArgs("gs://bkt")}}}}}},
          {"baseOutputDirectory", {{"outputUriPrefix", "gs://bkt/run"}}}}},
        {"modelToUpload",
         {{"displayName", "bert-model"}, {"containerSpec", {{"imageUri", kPrebuiltPytorch}}}}}};
    auto created = Http(server_->port(), "POST",
                        "/v1/" + std::string(kParent) + "/trainingPipelines", body.dump());
    EXPECT_EQ(created.status, 200) << created.body.dump();
    json pipeline;
    for (int i = 0; i < 1200; ++i) {
      pipeline = Http(server_->port(), "GET", "/v1/" + created.body.value("name", "")).body;
      const std::string state = pipeline.value("state", "");
      if (state == "PIPELINE_STATE_SUCCEEDED" || state == "PIPELINE_STATE_FAILED") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    EXPECT_EQ(pipeline.value("state", ""), "PIPELINE_STATE_SUCCEEDED") << pipeline.dump();
    return pipeline["modelToUpload"].value("name", "");
  }

  json Describe(const std::string& endpoint) {
    auto r = Gcloud({"ai", "endpoints", "describe", endpoint, "--format=json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }
};

TEST_F(GcloudEndpointsTest, DeploysAPipelinesModelPredictsSplitsTrafficUndeploysAndDeletes) {
  const std::string model = TrainWithPipeline();
  ASSERT_FALSE(model.empty());
  const std::string artifacts =
      Http(server_->port(), "GET", "/v1/" + model).body.value("artifactUri", "");
  auto created = Gcloud({"ai", "endpoints", "create", "--display-name=ep1", "--labels=team=a"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(created.err, m,
                                std::regex("Created Vertex AI endpoint: (projects/\\S+/endpoints/"
                                           "([0-9]+))\\.")))
      << created.err;
  const std::string endpoint = m[1], e = m[2];

  auto deploy = Gcloud({"ai", "endpoints", "deploy-model", e, "--model=" + Id(model),
                        "--display-name=dm1", "--machine-type=n1-standard-1"});
  const std::regex deployed("Id of the deployed model: ([0-9]+)\\.");
  ASSERT_TRUE(std::regex_search(deploy.err, m, deployed)) << deploy.err;
  const std::string d1 = m[1];

  // Predictions: the labels the trainer's own predict command gives.
  json request = {{"instances", {kTexts[0], {{"text", kTexts[1]}}}}};
  testing::WriteFileOrDie(dir_ / "request.json", request.dump());
  auto predict = Gcloud({"ai", "endpoints", "predict", e,
                         "--json-request=" + (dir_ / "request.json").string(), "--format=json"});
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  const std::vector<std::string> reference = ReferenceLabels(artifacts);
  EXPECT_EQ(LabelsOf(json::parse(predict.out, nullptr, false).value("predictions", json())),
            reference)
      << predict.out;
  auto raw = Gcloud(
      {"ai", "endpoints", "raw-predict", e, "--request={\"instances\": [\"" + kTexts[0] + "\"]}"});
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_EQ(LabelsOf(json::parse(raw.out, nullptr, false).value("predictions", json())),
            std::vector<std::string>{reference[0]})
      << raw.out;

  // A second version deployed beside it, with 30 % of the traffic; then all of it.
  deploy = Gcloud({"ai", "endpoints", "deploy-model", e, "--model=" + Id(model) + "@1",
                   "--display-name=dm2", "--machine-type=n1-standard-1",
                   "--traffic-split=0=30," + d1 + "=70"});
  ASSERT_TRUE(std::regex_search(deploy.err, m, deployed)) << deploy.err;
  const std::string d2 = m[1];
  EXPECT_EQ(Describe(e).value("trafficSplit", json()), (json{{d1, 70}, {d2, 30}}));
  auto update = Gcloud(
      {"ai", "endpoints", "update", e, "--traffic-split=" + d2 + "=100", "--display-name=ep2"});
  ASSERT_EQ(update.exit_code, 0) << update.err;
  json described = Describe(e);
  EXPECT_EQ(described.value("displayName", ""), "ep2");
  EXPECT_EQ(described.value("trafficSplit", json()), (json{{d2, 100}}));
  EXPECT_EQ(described["labels"], (json{{"team", "a"}}));
  for (int i = 0; i < 5; ++i) {
    HttpResult r = Predict(endpoint, request.dump());
    EXPECT_EQ(r.body.value("deployedModelId", "") + " " + r.body.value("model", ""),
              d2 + " " + model)
        << r.body.dump();
  }

  // Vertex's refusals: a model with traffic, an endpoint with models.
  auto refused = Gcloud({"ai", "endpoints", "undeploy-model", e, "--deployed-model-id=" + d2});
  EXPECT_NE(refused.err.find("has 100% of the endpoint's traffic"), std::string::npos)
      << refused.err;
  refused = Gcloud({"ai", "endpoints", "delete", e});
  EXPECT_NE(refused.err.find("undeploy them first"), std::string::npos) << refused.err;

  for (const std::string& d : {d1, d2}) {
    auto undeploy = Gcloud({"ai", "endpoints", "undeploy-model", e, "--deployed-model-id=" + d});
    EXPECT_EQ(undeploy.exit_code, 0) << undeploy.err;
  }
  auto deleted = Gcloud({"ai", "endpoints", "delete", e});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
  auto list = Gcloud({"ai", "endpoints", "list"});
  EXPECT_NE(list.err.find("Listed 0 items."), std::string::npos) << list.out << list.err;
  // Its replicas' jobs ended with the undeploys.
  auto jobs =
      Http(server_->port(), "GET",
           "/v1/" + std::string(kParent) + "/customJobs?filter=labels.trainyard-endpoint%3D" + e);
  ASSERT_EQ(jobs.body.value("customJobs", json::array()).size(), 2u) << jobs.body.dump();
  for (const json& job : jobs.body["customJobs"]) {
    EXPECT_EQ(job.value("state", ""), "JOB_STATE_CANCELLED") << job.dump();
  }
}

TEST_F(EndpointsE2ETest, TrainyardAiEndpointsSpeaksGcloud) {
  TrainInto("m1");
  const std::string model = Upload("m1");
  auto cli = [&](std::vector<std::string> args) {
    args.push_back("--region=us-central1");
    args.push_back("--project=p1");
    return Cli(server_->endpoint(), args);
  };
  auto created = cli({"ai", "endpoints", "create", "--display-name=cli-ep"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      created.err, m, std::regex("Created Vertex AI endpoint: \\S+/endpoints/([0-9]+)\\.")))
      << created.err;
  const std::string e = m[1];
  auto deploy = cli({"ai", "endpoints", "deploy-model", e, "--model=" + Id(model),
                     "--display-name=dm", "--machine-type=n1-standard-1"});
  ASSERT_TRUE(std::regex_search(deploy.err, m, std::regex("Id of the deployed model: ([0-9]+)\\.")))
      << deploy.err;
  const std::string d = m[1];
  testing::WriteFileOrDie(dir_ / "req.json", json{{"instances", kTexts}}.dump());
  auto predict =
      cli({"ai", "endpoints", "predict", e, "--json-request=" + (dir_ / "req.json").string()});
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  std::vector<std::string> labels;
  std::istringstream lines(predict.out);
  for (std::string line; std::getline(lines, line);) {
    labels.push_back(json::parse(line, nullptr, false).value("label", "?"));
  }
  EXPECT_EQ(labels, ReferenceLabels("gs://bkt/m1"));
  auto raw =
      cli({"ai", "endpoints", "raw-predict", e, "--request=@" + (dir_ / "req.json").string()});
  EXPECT_EQ(LabelsOf(json::parse(raw.out, nullptr, false).value("predictions", json())), labels)
      << raw.out << raw.err;
  auto list = cli({"ai", "endpoints", "list"});
  EXPECT_NE(list.out.find(e + "  cli-ep"), std::string::npos) << list.out;
  auto bad = cli({"ai", "endpoints", "update", e, "--traffic-split=" + d + "=90"});
  EXPECT_NE(bad.err.find("add up to 90"), std::string::npos) << bad.err;
  EXPECT_EQ(cli({"ai", "endpoints", "undeploy-model", e, "--deployed-model-id=" + d}).exit_code, 0);
  EXPECT_EQ(cli({"ai", "endpoints", "delete", e}).exit_code, 0);
  EXPECT_EQ(Http(server_->port(), "GET", "/v1/" + std::string(kParent) + "/endpoints/" + e).status,
            404);
}

TEST_F(EndpointsE2ETest, KillDashNineOfTheServerOrOfAReplicaLosesNothing) {
  TrainInto("m1");
  const std::string endpoint = CreateEndpoint("ep");
  json op = Deploy(endpoint, Upload("m1"));
  ASSERT_TRUE(op.value("done", false) && !op.contains("error")) << op.dump();
  const std::string body = json{{"instances", kTexts}}.dump();
  ASSERT_EQ(Predict(endpoint, body).status, 200);
  const pid_t replica = ServingPid(Id(endpoint));
  ASSERT_GT(replica, 0);

  // The server dies; the replica runs on and is re-adopted, not restarted.
  server_->Kill(SIGKILL);
  StartServer();
  HttpResult r;
  for (int i = 0; i < 100 && r.status != 200; ++i) {
    r = Predict(endpoint, body);
    if (r.status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(ServingPid(Id(endpoint)), replica);
  json e = Http(server_->port(), "GET", "/v1/" + endpoint).body;
  EXPECT_EQ(e.value("deployedModels", json::array()).size(), 1u) << e.dump();

  // The replica dies: requests meanwhile get a retryable 503 saying so, then it is back.
  ASSERT_EQ(::kill(replica, SIGKILL), 0);
  std::set<int> statuses;
  r = {};
  for (int i = 0; i < 600 && r.status != 200; ++i) {
    r = Predict(endpoint, body);
    statuses.insert(r.status);
    if (r.status == 503) {
      EXPECT_NE(r.body.dump().find("retry"), std::string::npos) << r.body.dump();
    }
    if (r.status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(r.status, 200) << r.body.dump();
  statuses.erase(200);
  statuses.erase(503);
  EXPECT_TRUE(statuses.empty()) << "statuses other than 200 and 503: " << *statuses.begin();
  EXPECT_NE(ServingPid(Id(endpoint)), replica);
}

TEST_F(EndpointsE2ETest, MutateDeployedModelScalesItsReplicas) {
  TrainInto("m1");
  const std::string endpoint = CreateEndpoint("ep");
  const std::string model = Upload("m1");
  json op = Deploy(endpoint, model);
  const std::string d = op["response"]["deployedModel"].value("id", "");
  ASSERT_FALSE(d.empty()) << op.dump();
  // A deployed model (or its version) cannot be deleted, as on Vertex.
  auto refused = Http(server_->port(), "DELETE", "/v1/" + model);
  EXPECT_EQ(refused.status, 400) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("is deployed to " + endpoint), std::string::npos)
      << refused.body.dump();
  refused = Http(server_->port(), "DELETE", "/v1/" + model + "@1:deleteVersion");
  EXPECT_NE(refused.body.dump().find("undeploy it first"), std::string::npos)
      << refused.body.dump();
  // Not quite an HttpBody envelope: the model's own bytes, which it refuses (never a 5xx).
  for (const char* raw : {R"({"httpBody": {"contentType": 5, "data": 1}})",
                          R"({"httpBody": {"data": "!!"}})", "\xff"}) {
    auto r = Http(server_->port(), "POST", "/v1/" + endpoint + ":rawPredict", raw);
    EXPECT_EQ(r.status, 400) << raw << " " << r.body.dump();
  }
  json body = {
      {"deployedModel",
       {{"id", d}, {"dedicatedResources", {{"minReplicaCount", 2}, {"maxReplicaCount", 2}}}}},
      {"updateMask", "dedicated_resources.min_replica_count,dedicatedResources.maxReplicaCount"}};
  auto r = Http(server_->port(), "POST", "/v1/" + endpoint + ":mutateDeployedModel", body.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["response"]["deployedModel"]["dedicatedResources"].value("minReplicaCount", 0),
            2);
  const std::string running = "/v1/" + std::string(kParent) +
                              "/customJobs?filter=state%3DJOB_STATE_RUNNING%20AND%20labels."
                              "trainyard-deployed-model%3D" +
                              d;
  size_t n = 0;
  for (int i = 0; i < 300 && n != 2; ++i) {
    n = Http(server_->port(), "GET", running).body.value("customJobs", json::array()).size();
    if (n != 2) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(n, 2u);
  body["updateMask"] = "model";
  r = Http(server_->port(), "POST", "/v1/" + endpoint + ":mutateDeployedModel", body.dump());
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_NE(r.body.dump().find("cannot be changed on a deployed model"), std::string::npos);
}

// Between minReplicaCount and maxReplicaCount on load: 16 clients keep more than 4 requests in
// flight per replica, so a second replica starts.
TEST_F(EndpointsE2ETest, AutoscalesUpUnderLoad) {
  TrainInto("m1");
  const std::string endpoint = CreateEndpoint("ep");
  json body = {{"deployedModel",
                {{"model", Upload("m1")},
                 {"dedicatedResources",
                  {{"machineSpec", {{"machineType", "n1-standard-1"}}},
                   {"minReplicaCount", 1},
                   {"maxReplicaCount", 2}}}}}};
  json op = WaitOperation(
      Http(server_->port(), "POST", "/v1/" + endpoint + ":deployModel", body.dump()).body);
  const std::string d = op["response"]["deployedModel"].value("id", "");
  ASSERT_FALSE(d.empty()) << op.dump();
  const std::string running = "/v1/" + std::string(kParent) +
                              "/customJobs?filter=state%3DJOB_STATE_RUNNING%20AND%20labels."
                              "trainyard-deployed-model%3D" +
                              d;
  std::atomic<bool> stop{false};
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  const std::string request = json{{"instances", kTexts}}.dump();
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", server_->port());
      while (!stop) {
        auto r = client.Post("/v1/" + endpoint + ":predict", request, "application/json");
        if (!r || (r->status != 200 && r->status != 503)) ++failed;
      }
    });
  }
  size_t n = 0;
  for (int i = 0; i < 600 && n < 2; ++i) {
    n = Http(server_->port(), "GET", running).body.value("customJobs", json::array()).size();
    if (n < 2) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(failed.load(), 0);
  // What a scrape shows of it.
  httplib::Client client("127.0.0.1", server_->port());
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  const std::string labels = "{endpoint=\"" + endpoint + "\",deployed_model=\"" + d + "\"}";
  EXPECT_NE(metrics->body.find("trainyard_serving_replicas" + labels + " 2"), std::string::npos)
      << metrics->body;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(metrics->body, m,
                                std::regex("trainyard_predictions_total\\{[^}]*\\} ([0-9]+)")))
      << metrics->body;
  EXPECT_GT(std::stoll(m[1]), 16);
}

// A model whose replicas cannot start (a broken export): the deploy's operation ends with the
// replicas' error, its jobs end, and the endpoint is as before.
TEST_F(EndpointsE2ETest, ADeployWhoseReplicasFailEndsWithTheirError) {
  fs::create_directories(dir_ / "buckets/bkt/broken");
  testing::WriteFileOrDie(dir_ / "buckets/bkt/broken/config.json", "{}");
  testing::WriteFileOrDie(dir_ / "buckets/bkt/broken/vocab.txt", "hello\n");
  testing::WriteFileOrDie(dir_ / "buckets/bkt/broken/model.safetensors", "x");
  const std::string endpoint = CreateEndpoint("ep");
  json op = Deploy(endpoint, Upload("broken"));
  ASSERT_TRUE(op.value("done", false)) << op.dump();
  ASSERT_TRUE(op.contains("error")) << op.dump();
  EXPECT_NE(op["error"].value("message", "").find("serving replicas failed 3 times"),
            std::string::npos)
      << op.dump();
  EXPECT_NE(op["error"].value("message", "").find("gcloud ai custom-jobs stream-logs"),
            std::string::npos)
      << op.dump();
  EXPECT_NE(op["error"].value("message", "").find("the vocabulary has no [PAD] token"),
            std::string::npos)
      << op.dump();
  json e = Http(server_->port(), "GET", "/v1/" + endpoint).body;
  EXPECT_FALSE(e.contains("deployedModels")) << e.dump();
  EXPECT_FALSE(e.contains("trafficSplit")) << e.dump();
  auto jobs = Http(server_->port(), "GET",
                   "/v1/" + std::string(kParent) +
                       "/customJobs?filter=labels.trainyard-endpoint%3D" + Id(endpoint));
  ASSERT_EQ(jobs.body.value("customJobs", json::array()).size(), 3u) << jobs.body.dump();
  for (const json& job : jobs.body["customJobs"]) {
    EXPECT_EQ(job.value("state", ""), "JOB_STATE_FAILED") << job.dump();
  }
}

TEST_F(EndpointsE2ETest, RefusalsNameTheFieldAndTheFix) {
  // Artifacts Trainyard does not serve (a TorchServe archive) behind a prebuilt image.
  fs::create_directories(dir_ / "buckets/bkt/mar");
  testing::WriteFileOrDie(dir_ / "buckets/bkt/mar/model.mar", "PK");
  const std::string endpoint = CreateEndpoint("ep");
  json body = {{"deployedModel", {{"model", Upload("mar")}}}};
  auto r = Http(server_->port(), "POST", "/v1/" + endpoint + ":deployModel", body.dump());
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_NE(r.body.dump().find("cannot be served"), std::string::npos) << r.body.dump();
  body["deployedModel"]["model"] = std::string(kParent) + "/models/404";
  EXPECT_EQ(Http(server_->port(), "POST", "/v1/" + endpoint + ":deployModel", body.dump()).status,
            404);
  r = Predict(endpoint, json{{"instances", kTexts}}.dump());
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_NE(r.body.dump().find("takes no traffic"), std::string::npos) << r.body.dump();
  r = Http(server_->port(), "PATCH", "/v1/" + endpoint + "?updateMask=traffic_split",
           json{{"trafficSplit", {{"123", 100}}}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.dump().find("not a model deployed on this endpoint"), std::string::npos)
      << r.body.dump();
  r = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/endpoints",
           json{{"displayName", "x"}, {"trafficSplit", {{"1", 100}}}}.dump());
  EXPECT_EQ(r.status, 400);
  const std::string big = "{\"instances\": [\"" + std::string(1600 * 1024, 'a') + "\"]}";
  r = Predict(endpoint, big);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.dump().find("Request payload size exceeds the limit: 1572864"),
            std::string::npos);
  // Hostile bodies on every new route: a 4xx naming the problem, never a 5xx or a dead server.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const char* verb :
       {":predict", ":rawPredict", ":deployModel", ":undeployModel", ":mutateDeployedModel", ""}) {
    for (const std::string& hostile :
         {deep, std::string("{\"instances\": [\"\xff\xfe\"]}"), std::string("{"),
          std::string("{\"deployedModel\": {\"model\": 5}}"), std::string("[]")}) {
      const std::string path =
          *verb ? "/v1/" + endpoint + verb : "/v1/" + std::string(kParent) + "/endpoints";
      r = Http(server_->port(), "POST", path, hostile);
      EXPECT_TRUE(r.status >= 400 && r.status < 500)
          << path << " " << r.status << " " << r.body.dump();
    }
  }
  for (const std::string& hostile : {deep, std::string("{\"labels\": \"\xff\"}")}) {
    r = Http(server_->port(), "PATCH", "/v1/" + endpoint + "?updateMask=labels", hostile);
    EXPECT_TRUE(r.status >= 400 && r.status < 500) << r.status << " " << r.body.dump();
  }
  // A 1 MiB header: refused by the transport, the server stays up.
  httplib::Client client("127.0.0.1", server_->port());
  auto huge = client.Post("/v1/" + endpoint + ":predict", {{"X-Big", std::string(1 << 20, 'a')}},
                          "{}", "application/json");
  EXPECT_TRUE(!huge || (huge->status >= 400 && huge->status < 500));
  EXPECT_EQ(Http(server_->port(), "GET", "/healthz").status, 200);
}

// Artifacts are looked at beneath the bucket root without following links: a config.json a job
// planted as a link (here to a real export's) makes no BERT classifier.
TEST_F(EndpointsE2ETest, ALinkInTheArtifactsIsNotFollowed) {
  TrainInto("real");
  const fs::path planted = dir_ / "buckets/bkt/planted";
  fs::create_directories(planted);
  for (const char* f : {"vocab.txt", "model.safetensors", "labels.json"}) {
    fs::copy_file(dir_ / "buckets/bkt/real" / f, planted / f);
  }
  fs::create_symlink(dir_ / "buckets/bkt/real/config.json", planted / "config.json");
  const std::string endpoint = CreateEndpoint("ep");
  json body = {{"deployedModel", {{"model", Upload("planted")}}}};
  auto r = Http(server_->port(), "POST", "/v1/" + endpoint + ":deployModel", body.dump());
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_NE(r.body.dump().find("cannot be served"), std::string::npos) << r.body.dump();
}

}  // namespace
}  // namespace trainyard::e2e
