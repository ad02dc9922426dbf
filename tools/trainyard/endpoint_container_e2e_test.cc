// A model with its own serving container (Vertex's custom container requirements) deployed on
// the real server: the image comes from the loopback registry (trainyard/pytorch, for its
// python3), the model's containerSpec gives the command, args with $(VAR) references, env, a
// port and its own predict and health routes; the container reads the model's artifacts through
// AIP_STORAGE_URI (the bucket mapping training replicas use) and answers through those routes.
// The same container also scores a batch prediction job (pool 1 of its backing job).
// Skipped, with the reason, without root, podman, a host that can start containers (failed
// instead with TRAINYARD_REQUIRE_CONTAINERS=1, CI), the registry ($TRAINYARD_REGISTRY) or the
// image in it (scripts/build-images.sh pytorch).
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "e2e_harness.h"
#include "testing/container_probe.h"

namespace trainyard::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kParent = "projects/p1/locations/us-central1";

// The serving program: Vertex's contract read from the environment, an artifact read from the
// model's directory (gs:// is mounted at /gcs), one prediction per instance.
constexpr const char* kServer = R"(
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
uri = os.environ["AIP_STORAGE_URI"]
weights = open("/gcs/" + uri[len("gs://"):].rstrip("/") + "/weights.txt").read().strip()
class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == os.environ["AIP_HEALTH_ROUTE"] else 404)
        self.end_headers()
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != os.environ["AIP_PREDICT_ROUTE"]:
            self.send_response(404)
            self.end_headers()
            return
        out = {"predictions": [{"echo": i, "weights": weights, "arg": sys.argv[1],
                                "greeting": os.environ["GREETING"]} for i in body["instances"]]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
HTTPServer(("0.0.0.0", int(os.environ["AIP_HTTP_PORT"])), Handler).serve_forever()
)";

class EndpointContainerE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* registry = std::getenv("TRAINYARD_REGISTRY");
    if (::geteuid() != 0) GTEST_SKIP() << "custom serving containers need root (rootful podman)";
    if (!HaveLocalExecutor()) GTEST_SKIP() << "custom serving containers need the local executor";
    if (std::system("command -v podman >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "custom serving containers need podman (scripts/install-deps.sh --test)";
    }
    if (std::string why = testing::ContainerHostProblem(); !why.empty()) {
      if (testing::ContainersRequired()) FAIL() << testing::ContainersRequiredFailure(why);
      GTEST_SKIP() << "custom serving containers need a host that can start containers: " << why;
    }
    if (registry == nullptr || *registry == '\0') {
      GTEST_SKIP() << "custom serving containers need a registry: scripts/registry-local.sh "
                      "start; eval \"$(scripts/registry-local.sh env)\"";
    }
    image_ = std::string(registry) + "/trainyard/pytorch:latest";
    const std::string probe =
        "curl -sf -o /dev/null -H 'Accept: application/vnd.oci.image.manifest.v1+json' -H "
        "'Accept: application/vnd.docker.distribution.manifest.v2+json' http://" +
        std::string(registry) + "/v2/trainyard/pytorch/manifests/latest";
    if (std::system(probe.c_str()) != 0) {
      GTEST_SKIP() << "custom serving containers need trainyard/pytorch in " << registry
                   << ": scripts/build-images.sh pytorch";
    }
    dir_ = testing::MakeTestDir();
    fs::create_directories(dir_ / "buckets/bkt/custom");
    testing::WriteFileOrDie(dir_ / "buckets/bkt/custom/weights.txt", "w-42\n");
    std::string error;
    // Unprivileged replicas (`nobody`), as a root server runs them.
    server_ = ServerProcess::Start(dir_ / "data", {"--executor", "local", "--gpus", "0"}, &error,
                                   {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()},
                                   /*allow_root_replicas=*/false);
    ASSERT_NE(server_, nullptr) << error;
  }

  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) EndReplicas(dir_ / "data");
  }

  fs::path dir_;
  std::string image_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(EndpointContainerE2ETest, ACustomContainerServesThroughItsOwnRoutes) {
  json upload = {{"model",
                  {{"displayName", "custom"},
                   {"artifactUri", "gs://bkt/custom"},
                   {"containerSpec",
                    {{"imageUri", image_},
                     {"command", {"python3", "-c", kServer}},
                     {"args", {"model-$(AIP_DEPLOYED_MODEL_ID)"}},
                     {"env", {{{"name", "GREETING"}, {"value", "hello from $(AIP_ENDPOINT_ID)"}}}},
                     {"ports", {{{"containerPort", 7080}}}},
                     {"predictRoute", "/custom/predict"},
                     {"healthRoute", "/custom/health"}}}}}};
  auto r = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/models:upload",
                upload.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const std::string model = r.body["response"].value("model", "");
  r = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/endpoints",
           json{{"displayName", "custom-ep"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const std::string endpoint = r.body["response"].value("name", "");
  const std::string e = endpoint.substr(endpoint.rfind('/') + 1);
  json deploy = {
      {"deployedModel",
       {{"model", model},
        {"dedicatedResources",
         {{"machineSpec", {{"machineType", "n1-standard-1"}}}, {"minReplicaCount", 1}}}}}};
  r = Http(server_->port(), "POST", "/v1/" + endpoint + ":deployModel", deploy.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  json op = r.body;
  for (int i = 0; i < 3000 && !op.value("done", false); ++i) {  // the first pull takes a while
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    op = Http(server_->port(), "GET", "/v1/" + op.value("name", "")).body;
  }
  ASSERT_TRUE(op.value("done", false) && !op.contains("error")) << op.dump();
  const std::string d = op["response"]["deployedModel"].value("id", "");

  r = Http(server_->port(), "POST", "/v1/" + endpoint + ":predict",
           json{{"instances", {"a", 2}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const json expected_first = {
      {"echo", "a"}, {"weights", "w-42"}, {"arg", "model-" + d}, {"greeting", "hello from " + e}};
  EXPECT_EQ(r.body["predictions"][0], expected_first) << r.body.dump();
  EXPECT_EQ(r.body["predictions"][1].value("echo", 0), 2);
  EXPECT_EQ(r.body.value("deployedModelId", ""), d);
  r = Http(server_->port(), "POST", "/v1/" + endpoint + ":rawPredict",
           json{{"instances", {"raw"}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["predictions"][0].value("echo", ""), "raw") << r.body.dump();
  EXPECT_FALSE(r.body.contains("deployedModelId")) << "rawPredict answers the model's bytes";

  r = Http(server_->port(), "POST", "/v1/" + endpoint + ":undeployModel",
           json{{"deployedModelId", d}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
}

// The same container as a batch prediction's model: pool 1 runs it (as `nobody`, in podman),
// pool 0 feeds it the instances of a jsonl file in a bucket.
TEST_F(EndpointContainerE2ETest, ACustomContainerScoresABatchPrediction) {
  json upload = {{"model",
                  {{"displayName", "custom-batch"},
                   {"artifactUri", "gs://bkt/custom"},
                   {"containerSpec",
                    {{"imageUri", image_},
                     {"command", {"python3", "-c", kServer}},
                     {"args", {"batch"}},
                     {"env", {{{"name", "GREETING"}, {"value", "hi"}}}},
                     {"predictRoute", "/custom/predict"},
                     {"healthRoute", "/custom/health"}}}}}};
  auto r = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/models:upload",
                upload.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  std::string jsonl;
  for (int i = 0; i < 20; ++i) jsonl += std::to_string(i) + "\n";
  testing::WriteFileOrDie(dir_ / "buckets/bkt/in.jsonl", jsonl);
  json body = {
      {"displayName", "custom-batch"},
      {"model", r.body["response"]["model"]},
      {"inputConfig",
       {{"instancesFormat", "jsonl"}, {"gcsSource", {{"uris", {"gs://bkt/in.jsonl"}}}}}},
      {"outputConfig",
       {{"predictionsFormat", "jsonl"}, {"gcsDestination", {{"outputUriPrefix", "gs://bkt/out"}}}}},
      {"dedicatedResources", {{"machineSpec", {{"machineType", "n1-standard-1"}}}}}};
  r = Http(server_->port(), "POST", "/v1/" + std::string(kParent) + "/batchPredictionJobs",
           body.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  json job = r.body;
  for (int i = 0; i < 3000; ++i) {  // the first pull takes a while
    const std::string state = job.value("state", "");
    if (state == "JOB_STATE_SUCCEEDED" || state == "JOB_STATE_FAILED") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    job = Http(server_->port(), "GET", "/v1/" + job.value("name", "")).body;
  }
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2);
  EXPECT_EQ(job["completionStats"]["successfulCount"], "20");
  const std::string out = job["outputInfo"]["gcsOutputDirectory"];
  const std::string text = testing::ReadFileOrDie(dir_ / "buckets" / out.substr(5) /
                                                  "prediction.results-00000-of-00001");
  const json first = json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(first["prediction"],
            json({{"echo", 0}, {"weights", "w-42"}, {"arg", "batch"}, {"greeting", "hi"}}))
      << first.dump();
}

}  // namespace
}  // namespace trainyard::e2e
