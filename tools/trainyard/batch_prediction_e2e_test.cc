// Batch prediction on the real server, with real `trainyard-bert batch-predict` replicas (custom
// jobs of the local executor) and a model the real trainer trained:
//  - a jsonl file with a malformed line over two replicas: Vertex's output layout, read back
//    through the storage API, one line per instance, labels as `trainyard-bert predict` gives;
//  - a csv file (Vertex's quoting rules: an unquoted text cell is a bad row, not a failed job);
//  - kill -9 of the server while a job runs: it finishes after the restart, nothing lost;
//  - a model in its own serving container (a host command here), fed by pool 0 over HTTP;
//  - a link planted in the input bucket is never followed; hostile create bodies are refused;
//  - two replicas on a real local Slurm cluster (skipped without one: scripts/slurm-local.sh).
// Skipped without the local executor or trainyard-bert.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kParent = "projects/p1/locations/us-central1";
const std::vector<std::string> kTexts = {"good movie", "the bad movie", "good good movie",
                                         "bad movie"};

class BatchPredictionE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveLocalExecutor() || !fs::exists(testing::ToolPath("trainyard-bert"))) {
      GTEST_SKIP() << "needs the local executor and trainyard-bert";
    }
    dir_ = testing::MakeTestDir();
    for (const char* b : {"bkt", "inputs", "outputs"}) fs::create_directories(dir_ / "buckets" / b);
    testing::WriteFileOrDie(dir_ / "vocab.txt",
                            "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\nmovie\nthe\n");
    std::string csv = "bodyText,Target\n";
    for (int i = 0; i < 64; ++i) csv += i % 2 ? "good movie,1\n" : "the bad movie,0\n";
    testing::WriteFileOrDie(dir_ / "train.csv", csv);
    env_ = {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string(),
            "PATH=" + testing::ToolPath("trainyard-bert").parent_path().string() + ":" +
                std::getenv("PATH")};
    auto r = testing::RunProcess({testing::ToolPath("trainyard-bert").string(), "train",
                                  "--job-dir=" + (dir_ / "buckets/bkt/bert").string(),
                                  "--training-file=" + (dir_ / "train.csv").string(),
                                  "--validation-file=" + (dir_ / "train.csv").string(),
                                  "--vocab=" + (dir_ / "vocab.txt").string(), "--epochs=10",
                                  "--batch-size=8", "--learning-rate=5e-4", "--threads=1"},
                                 "", env_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    StartServer();
    auto up =
        Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/models:upload",
             json{{"model", {{"displayName", "bert"}, {"artifactUri", "gs://bkt/bert"}}}}.dump());
    ASSERT_EQ(up.status, 200) << up.body.dump();
    model_ = up.body["response"].value("model", "");
  }

  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) EndReplicas(dir_ / "data");
  }

  void StartServer(std::vector<std::string> args = {"--executor", "local", "--gpus", "0"},
                   bool root_replicas = true) {
    std::string error;
    args.insert(args.end(), {"--kill-grace-seconds", "1"});
    server_ = ServerProcess::Start(dir_ / "data", args, &error, env_, root_replicas);
    ASSERT_NE(server_, nullptr) << error;
  }

  std::map<std::string, std::string> Expected() {
    std::vector<std::string> argv = {
        testing::ToolPath("trainyard-bert").string(), "predict",   "--model-dir",
        (dir_ / "buckets/bkt/bert").string(),         "--threads", "1"};
    for (const auto& t : kTexts) argv.insert(argv.end(), {"--text", t});
    auto r = testing::RunProcess(argv, "", env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::string> out;
    std::istringstream lines(r.out);
    std::string line;
    for (size_t i = 0; std::getline(lines, line) && i < kTexts.size(); ++i) {
      out[kTexts[i]] = json::parse(line)["label"];
    }
    return out;
  }

  json Body(const std::string& format, const std::string& uri, const std::string& out,
            int replicas) {
    return {{"displayName", "bp-" + format},
            {"model", model_},
            {"inputConfig", {{"instancesFormat", format}, {"gcsSource", {{"uris", {uri}}}}}},
            {"outputConfig",
             {{"predictionsFormat", "jsonl"}, {"gcsDestination", {{"outputUriPrefix", out}}}}},
            {"dedicatedResources",
             {{"machineSpec", {{"machineType", "n1-standard-1"}}},
              {"startingReplicaCount", replicas}}}};
  }

  json Create(const json& body) {
    auto r = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/batchPredictionJobs",
                  body.dump());
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body;
  }

  json Wait(const std::string& name, int timeout_s = 120) {
    json job;
    for (int i = 0; i < timeout_s * 5; ++i) {
      job = Http(server_->port(), "GET", "/v1/" + name).body;
      const std::string s = job.value("state", "");
      if (s == "JOB_STATE_SUCCEEDED" || s == "JOB_STATE_FAILED" || s == "JOB_STATE_CANCELLED") {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return job;
  }

  // The objects under a job's output directory, through the storage API (as iter_outputs).
  std::map<std::string, std::vector<json>> Outputs(const json& job) {
    const std::string dir = job["outputInfo"]["gcsOutputDirectory"];
    const std::string rest = dir.substr(std::string("gs://").size());
    const std::string bucket = rest.substr(0, rest.find('/'));
    const std::string prefix = rest.substr(rest.find('/') + 1);
    auto list = Http(server_->port(), "GET", "/storage/v1/b/" + bucket + "/o?prefix=" + prefix);
    EXPECT_EQ(list.status, 200) << list.body.dump();
    std::map<std::string, std::vector<json>> out;
    for (const json& item : list.body.value("items", json::array())) {
      const std::string name = item["name"];
      std::ifstream in(dir_ / "buckets" / bucket / name);
      std::string line;
      auto& lines = out[name.substr(name.rfind('/') + 1)];
      while (std::getline(in, line)) lines.push_back(json::parse(line));
    }
    return out;
  }

  fs::path dir_;
  std::vector<std::string> env_;
  std::unique_ptr<ServerProcess> server_;
  std::string model_;
};

TEST_F(BatchPredictionE2ETest, JsonlOverTwoReplicasWritesVertexsLayoutWithTheBadLineInErrors) {
  std::string jsonl;
  for (size_t i = 0; i < kTexts.size(); ++i) {
    jsonl += (i % 2 ? json{{"text", kTexts[i]}} : json(kTexts[i])).dump() + "\n";
    if (i == 1) jsonl += "{\"text\": broken\n";
  }
  testing::WriteFileOrDie(dir_ / "buckets/inputs/in.jsonl", jsonl);
  json job = Create(Body("jsonl", "gs://inputs/in.jsonl", "gs://outputs/run", 2));
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_PENDING");
  job = Wait(job["name"]);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2);
  EXPECT_EQ(job["completionStats"]["successfulCount"], "4");
  EXPECT_EQ(job["completionStats"]["failedCount"], "1");
  EXPECT_EQ(job["partialFailures"].size(), 1u);
  EXPECT_TRUE(job.contains("startTime") && job.contains("endTime"));
  auto outputs = Outputs(job);
  ASSERT_EQ(outputs.size(), 3u) << json(outputs).dump();
  const auto expected = Expected();
  std::map<std::string, std::string> got;
  for (const char* f : {"prediction.results-00000-of-00002", "prediction.results-00001-of-00002"}) {
    for (const json& line : outputs[f]) {
      const json& i = line["instance"];
      got[i.is_string() ? i.get<std::string>() : i["text"].get<std::string>()] =
          line["prediction"]["label"];
    }
  }
  EXPECT_EQ(got, expected);
  const auto& errors = outputs["prediction.errors_stats-00000-of-00002"];
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["instance"], "{\"text\": broken");
  // The backing job is an ordinary custom job, with its logs and cost.
  const std::string backing = job["trainyardInfo"]["backingCustomJob"];
  auto custom = Http(server_->port(), "GET", "/v1/" + backing);
  EXPECT_EQ(custom.body.value("state", ""), "JOB_STATE_SUCCEEDED");
  EXPECT_EQ(custom.body["labels"]["trainyard-batch-prediction"],
            job["name"].get<std::string>().substr(job["name"].get<std::string>().rfind('/') + 1));
}

// A serving container of the model's own (Vertex's contract: $AIP_HTTP_PORT, the routes): here a
// host command (`imageUri: local`), so the test needs no container runtime. It answers each text's
// length and refuses a batch holding anything else with 400 naming it.
constexpr const char* kModelServer = R"PY(
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer
class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == os.environ["AIP_HEALTH_ROUTE"] else 404)
        self.end_headers()
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        bad = [i for i in body["instances"] if not isinstance(i, str)]
        if bad:
            out, code = {"error": {"message": "not a text: " + json.dumps(bad[0])}}, 400
        else:
            out, code = {"predictions": [{"length": len(i), "pid": os.getpid()} for i in body["instances"]]}, 200
        data = json.dumps(out).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
HTTPServer(("0.0.0.0", int(os.environ["AIP_HTTP_PORT"])), Handler).serve_forever()
)PY";

TEST_F(BatchPredictionE2ETest, AModelInItsOwnServingContainerGetsEveryInstance) {
  json model = {{"displayName", "lengths"},
                {"artifactUri", "gs://bkt/bert"},
                {"containerSpec",
                 {{"imageUri", "local"},
                  {"command", {"python3", "-c", kModelServer}},
                  {"predictRoute", "/predict"},
                  {"healthRoute", "/health"}}}};
  auto up = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/models:upload",
                 json{{"model", model}}.dump());
  ASSERT_EQ(up.status, 200) << up.body.dump();
  std::string jsonl;
  for (int i = 0; i < 200; ++i) jsonl += json(std::string(i % 7 + 1, 'x')).dump() + "\n";
  jsonl += "42\n";  // the model refuses it: that instance's error, not the batch's
  testing::WriteFileOrDie(dir_ / "buckets/inputs/lengths.jsonl", jsonl);
  json body = Body("jsonl", "gs://inputs/lengths.jsonl", "gs://outputs/custom", 2);
  body["model"] = up.body["response"]["model"];
  body["manualBatchTuningParameters"] = {{"batchSize", 16}};
  json job = Wait(Create(body)["name"], 180);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2);
  EXPECT_EQ(job["completionStats"]["successfulCount"], "200");
  EXPECT_EQ(job["completionStats"]["failedCount"], "1");
  auto outputs = Outputs(job);
  const auto& results = outputs["prediction.results-00000-of-00001"];
  ASSERT_EQ(results.size(), 200u);
  std::set<int> pids;
  for (const json& line : results) {
    EXPECT_EQ(line["prediction"]["length"], line["instance"].get<std::string>().size());
    pids.insert(line["prediction"]["pid"].get<int>());
  }
  EXPECT_EQ(pids.size(), 2u) << "both model replicas served";
  const auto& errors = outputs["prediction.errors_stats-00000-of-00001"];
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["instance"], 42);
  EXPECT_EQ(errors[0]["error"]["message"], "not a text: 42");
}

// A root server runs the replicas as `nobody`: they read the model and the input from buckets
// the test made, write into the server's staging bucket, and the server moves the shards into an
// output bucket the test made; a restart mid-run changes nothing.
TEST_F(BatchPredictionE2ETest, ReplicasAsNobodyWithARestartMidRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "replicas run as nobody only under a root server";
  server_.reset();
  StartServer({"--executor", "local", "--gpus", "0"}, /*root_replicas=*/false);
  std::string jsonl;
  for (int i = 0; i < 2000; ++i) jsonl += json(kTexts[i % kTexts.size()]).dump() + "\n";
  testing::WriteFileOrDie(dir_ / "buckets/inputs/nobody.jsonl", jsonl);
  json job = Create(Body("jsonl", "gs://inputs/nobody.jsonl", "gs://outputs/nobody", 2));
  const std::string name = job["name"];
  for (int i = 0; i < 300 && job.value("state", "") != "JOB_STATE_RUNNING"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    job = Http(server_->port(), "GET", "/v1/" + name).body;
  }
  server_->Kill(SIGKILL);
  StartServer({"--executor", "local", "--gpus", "0"}, /*root_replicas=*/false);
  job = Wait(name, 300);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2) << server_->Stderr();
  EXPECT_EQ(job["completionStats"]["successfulCount"], "2000");
  auto outputs = Outputs(job);
  EXPECT_EQ(outputs["prediction.results-00000-of-00002"].size() +
                outputs["prediction.results-00001-of-00002"].size(),
            2000u);
  // Huge headers on the new collection are refused by the transport, not the handler.
  httplib::Client c("127.0.0.1", server_->port());
  auto r = c.Get("/v1/" + std::string(kParent) + "/batchPredictionJobs",
                 {{"X-Big", std::string(1 << 20, 'a')}});
  EXPECT_TRUE(!r || r->status >= 400);
}

TEST_F(BatchPredictionE2ETest, TwoReplicasOnSlurm) {
  if (std::string why = SlurmSkipReason(); !why.empty()) GTEST_SKIP() << why;
  server_.reset();
  StartServer({"--executor", "slurm"});
  std::string jsonl;
  for (int i = 0; i < 40; ++i) jsonl += json(kTexts[i % kTexts.size()]).dump() + "\n";
  testing::WriteFileOrDie(dir_ / "buckets/inputs/slurm.jsonl", jsonl);
  json job =
      Wait(Create(Body("jsonl", "gs://inputs/slurm.jsonl", "gs://outputs/slurm", 2))["name"], 300);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2) << server_->Stderr();
  EXPECT_EQ(job["completionStats"]["successfulCount"], "40");
  auto outputs = Outputs(job);
  EXPECT_EQ(outputs["prediction.results-00000-of-00002"].size(), 20u);
  EXPECT_EQ(outputs["prediction.results-00001-of-00002"].size(), 20u);
}

TEST_F(BatchPredictionE2ETest, CsvFollowsVertexsQuotingAndAKilledServerFinishesTheJob) {
  std::string csv = "text\n";
  for (int i = 0; i < 3000; ++i) csv += "\"" + kTexts[i % kTexts.size()] + "\"\n";
  csv += "good movie\n";  // unquoted: Vertex reads it as a number, so the row fails
  testing::WriteFileOrDie(dir_ / "buckets/inputs/in.csv", csv);
  json job = Create(Body("csv", "gs://inputs/in.csv", "gs://outputs/csv", 1));
  const std::string name = job["name"];
  for (int i = 0; i < 300 && job.value("state", "") != "JOB_STATE_RUNNING"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    job = Http(server_->port(), "GET", "/v1/" + name).body;
  }
  server_->Kill(SIGKILL);
  StartServer();
  job = Wait(name, 300);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2);
  EXPECT_EQ(job["completionStats"]["successfulCount"], "3000");
  EXPECT_EQ(job["completionStats"]["failedCount"], "1");
  auto outputs = Outputs(job);
  EXPECT_EQ(outputs["prediction.results-00000-of-00001"].size(), 3000u);
  ASSERT_EQ(outputs["prediction.errors_stats-00000-of-00001"].size(), 1u);
  EXPECT_NE(outputs["prediction.errors_stats-00000-of-00001"][0]["error"]["message"]
                .get<std::string>()
                .find("is not a number"),
            std::string::npos);
  EXPECT_EQ(outputs["prediction.results-00000-of-00001"][0]["instance"], json::array({kTexts[0]}));
}

TEST_F(BatchPredictionE2ETest, APlantedLinkIsNotFollowedAndHostileBodiesAreRefused) {
  fs::create_symlink("/etc/passwd", dir_ / "buckets/inputs/link.jsonl");
  json job = Wait(Create(Body("jsonl", "gs://inputs/link.jsonl", "gs://outputs/link", 1))["name"]);
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_FAILED") << job.dump(2);
  EXPECT_NE(job["error"].value("message", "").find("symbolic link"), std::string::npos)
      << job.dump(2);
  EXPECT_FALSE(fs::exists(dir_ / "buckets/outputs/link"));
  const std::string path = "/v1/" + std::string(kParent) + "/batchPredictionJobs";
  for (const std::string& body :
       {std::string(100000, '['), std::string("{\"displayName\": \"\xff\"}"),
        Body("jsonl", "gs://inputs/x", "gs://outputs/x", 1).dump() + "x",
        json{{"displayName", "x"}, {"modle", "m"}}.dump()}) {
    auto r = Http(server_->port(), "POST", path, body);
    EXPECT_EQ(r.status, 400) << r.body.dump();
  }
  json wrong = Body("tf-record", "gs://inputs/x", "gs://outputs/x", 1);
  auto r = Http(server_->port(), "POST", path, wrong.dump());
  EXPECT_NE(r.body["error"].value("message", "").find("inputConfig.instancesFormat"),
            std::string::npos);
  // Nothing refused was stored.
  auto list = Http(server_->port(), "GET", path);
  EXPECT_EQ(list.body["batchPredictionJobs"].size(), 1u) << list.body.dump();
}

}  // namespace
}  // namespace trainyard::e2e
