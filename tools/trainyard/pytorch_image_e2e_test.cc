// End-to-end: a job that names one of Vertex's prebuilt PyTorch training images runs in
// trainyard/pytorch (scripts/build-images.sh pytorch: Debian 12, python3-torch, `hypertune`) as a
// podman container, the way it runs on Vertex: `python -m MODULE` with the package from gs:// on
// PYTHONPATH or, from a source archive, pip-installed; AIP_MODEL_DIR written through /gcs,
// metrics reported with `import hypertune`.
// Uses the registry the environment names ($TRAINYARD_REGISTRY, trusted through
// /etc/containers/registries.conf.d as scripts/registry-local.sh sets it up; .ci/run pushes the
// image there). Skipped, with the reason, without root, podman, a host that can start containers
// (failed instead with TRAINYARD_REQUIRE_CONTAINERS=1, CI), that registry or the image in it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>

#include "common/file_util.h"
#include "e2e_harness.h"
#include "testing/container_probe.h"

namespace trainyard::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kParent = "projects/local/locations/us-central1";
constexpr const char* kVertexImage =
    "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.1-13.py310:latest";

// Fits y = 3x + 1 with SGD, prints what it ran on and its loss, saves the model to AIP_MODEL_DIR
// under Vertex's /gcs path and reports the loss with cloudml-hypertune's API.
constexpr const char* kTrainer = R"(import argparse, os, sys
import torch
import hypertune

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--steps", type=int, default=200)
args = parser.parse_args()
print("package", __file__)
torch.manual_seed(0)
x = torch.linspace(-1, 1, 64).unsqueeze(1)
y = 3 * x + 1
model = torch.nn.Linear(1, 1)
opt = torch.optim.SGD(model.parameters(), lr=args.lr)
for _ in range(args.steps):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print("torch %s python %d.%d uid %d loss %.9e" % (torch.__version__, sys.version_info.major,
      sys.version_info.minor, os.getuid(), loss.item()))
# Trainyard hands containers the /gcs form of gs:// output dirs; Vertex code may get either.
model_dir = os.environ["AIP_MODEL_DIR"]
local = "/gcs/" + model_dir[len("gs://"):] if model_dir.startswith("gs://") else model_dir
assert local.startswith("/gcs/bkt/"), model_dir
os.makedirs(local, exist_ok=True)
torch.save(model.state_dict(), os.path.join(local, "model.pt"))
hypertune.HyperTune().report_hyperparameter_tuning_metric(
    hyperparameter_metric_tag="loss", metric_value=loss.item(), global_step=args.steps)
)";

class PytorchImageE2ETest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* registry = std::getenv("TRAINYARD_REGISTRY");
    if (::geteuid() != 0) {
      skip_reason_ = "the trainyard/pytorch image tests need root (rootful podman)";
    } else if (!HaveLocalExecutor()) {
      skip_reason_ = "the trainyard/pytorch image tests need the local executor";
    } else if (std::system("command -v podman >/dev/null 2>&1") != 0) {
      skip_reason_ =
          "the trainyard/pytorch image tests need podman (scripts/install-deps.sh --test)";
    } else if (std::string why = testing::ContainerHostProblem(); !why.empty()) {
      if (testing::ContainersRequired()) {
        fail_reason_ = testing::ContainersRequiredFailure(why);
      } else {
        skip_reason_ =
            "the trainyard/pytorch image tests need a host that can start containers: " + why;
      }
    } else if (registry == nullptr || *registry == '\0') {
      skip_reason_ =
          "the trainyard/pytorch image tests need a registry: scripts/registry-local.sh start; "
          "eval \"$(scripts/registry-local.sh env)\"";
    } else {
      registry_ = registry;
      const std::string probe =
          "curl -sf -o /dev/null -H 'Accept: application/vnd.oci.image.manifest.v1+json' -H "
          "'Accept: application/vnd.docker.distribution.manifest.v2+json' http://" +
          registry_ + "/v2/trainyard/pytorch/manifests/latest";
      if (std::system(probe.c_str()) != 0) {
        skip_reason_ = "the trainyard/pytorch image tests need the image in " + registry_ +
                       ": scripts/build-images.sh pytorch";
      }
    }
  }

  void SetUp() override {
    if (!fail_reason_.empty()) FAIL() << fail_reason_;
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    dir_ = testing::MakeTestDir();
    const fs::path package = dir_ / "buckets" / "bkt" / "pkgs" / "trainer";
    fs::create_directories(package);
    ASSERT_TRUE(WriteFileAtomic(package / "__init__.py", "").ok());
    ASSERT_TRUE(WriteFileAtomic(package / "task.py", kTrainer).ok());
    std::string error;
    // Runs unprivileged (`nobody`): the image and the bucket are all a replica needs here.
    server_ = ServerProcess::Start(
        dir_ / "data", {"--executor", "local", "--gpus", "0", "--prebuilt-images", "container"},
        &error, {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()},
        /*allow_root_replicas=*/false);
    ASSERT_NE(server_, nullptr) << error;
    ASSERT_NE(server_->Stderr().find("Vertex's prebuilt PyTorch images run as containers"),
              std::string::npos)
        << server_->Stderr();
  }

  static json Pool(const std::vector<std::string>& args) {
    return {{"machineSpec", {{"machineType", "n1-standard-4"}}},
            {"replicaCount", "1"},
            {"pythonPackageSpec",
             {{"executorImageUri", kVertexImage},
              {"packageUris", {"gs://bkt/pkgs"}},
              {"pythonModule", "trainer.task"},
              {"args", args}}}};
  }

  // Creates a one-pool CustomJob writing under `output`, waits until it ends and returns it, with
  // its log in *logs.
  json RunJob(const std::string& display_name, const json& pool, const std::string& output,
              std::string* logs) {
    json body = {{"displayName", display_name},
                 {"jobSpec",
                  {{"workerPoolSpecs", json::array({pool})},
                   {"baseOutputDirectory", {{"outputUriPrefix", output}}}}}};
    auto r =
        Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs", body.dump());
    EXPECT_EQ(r.status, 200) << r.body.dump();
    const std::string name = r.body.value("name", "");
    json job = WaitForJob(server_->port(), name, {}, 540);
    *logs = Logs(name);
    return job;
  }

  std::string Logs(const std::string& name) {
    return Cli(server_->endpoint(), {"ai", "custom-jobs", "stream-logs", name}).out;
  }

  static inline std::string skip_reason_;
  static inline std::string fail_reason_;
  static inline std::string registry_;
  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(PytorchImageE2ETest, APythonPackageTrainsWithTorchInTheImageAndWritesTheModelThroughGcs) {
  std::string logs;
  json job = RunJob("pytorch-image", Pool({"--lr=0.1"}), "gs://bkt/out", &logs);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2) << logs;
  // Debian 12's torch and python, as `nobody`, pulled from the rewritten name.
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(logs, m, std::regex(R"(torch 1\.13\S* python 3\.11 uid 65534 loss (\S+))")))
      << logs;
  EXPECT_LT(std::stod(m[1]), 1e-3) << logs;  // SGD found y = 3x + 1
  EXPECT_NE(logs.find("pulling image " + registry_ + "/trainyard/pytorch:latest"),
            std::string::npos)
      << logs;
  auto model = ReadFile(dir_ / "buckets" / "bkt" / "out" / "model" / "model.pt");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->substr(0, 2), "PK");  // torch.save's zip format
}

// Vertex's usual flow: `python setup.py sdist`, the archive copied to gs://, named in packageUris.
// The replica pip-installs it (its install_requires, numpy, is met by the image's) as `nobody`,
// then runs the module from where pip put it.
TEST_F(PytorchImageE2ETest, ASourceArchiveIsPipInstalledInTheImageAsOnVertex) {
  const fs::path sdist = dir_ / "sdist" / "trainer-0.1";
  fs::create_directories(sdist / "trainer");
  ASSERT_TRUE(WriteFileAtomic(sdist / "setup.py",
                              "from setuptools import setup\n"
                              "setup(name='trainer', version='0.1', packages=['trainer'],\n"
                              "      install_requires=['numpy'])\n")
                  .ok());
  ASSERT_TRUE(
      WriteFileAtomic(sdist / "PKG-INFO", "Metadata-Version: 2.1\nName: trainer\nVersion: 0.1\n")
          .ok());
  ASSERT_TRUE(WriteFileAtomic(sdist / "trainer" / "__init__.py", "").ok());
  ASSERT_TRUE(WriteFileAtomic(sdist / "trainer" / "task.py", kTrainer).ok());
  fs::create_directories(dir_ / "buckets" / "bkt" / "dist");
  auto tar =
      testing::RunProcess({"tar", "-C", (dir_ / "sdist").string(), "-czf",
                           (dir_ / "buckets/bkt/dist/trainer-0.1.tar.gz").string(), "trainer-0.1"});
  ASSERT_EQ(tar.exit_code, 0) << tar.err;

  json pool = Pool({"--lr=0.1"});
  pool["pythonPackageSpec"]["packageUris"] = {"gs://bkt/dist/trainer-0.1.tar.gz"};
  std::string logs;
  json job = RunJob("pytorch-sdist", pool, "gs://bkt/sdist-out", &logs);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2) << logs;
  for (const std::string& want :
       {std::string("[trainyard] pip install /gcs/bkt/dist/trainer-0.1.tar.gz"),
        std::string("Successfully installed trainer-0.1"),
        std::string("package /tmp/trainyard-python-")}) {
    EXPECT_NE(logs.find(want), std::string::npos) << want << " not in\n" << logs;
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(logs, m, std::regex(R"(uid 65534 loss (\S+))"))) << logs;
  EXPECT_LT(std::stod(m[1]), 1e-3) << logs;
  EXPECT_TRUE(fs::exists(dir_ / "buckets" / "bkt" / "sdist-out" / "model" / "model.pt")) << logs;
}

TEST_F(PytorchImageE2ETest, AStudyGetsItsTrialsMetricsFromImportHypertune) {
  json body = {{"displayName", "pytorch-study"},
               {"maxTrialCount", 2},
               {"parallelTrialCount", 1},
               {"studySpec",
                {{"metrics", {{{"metricId", "loss"}, {"goal", "MINIMIZE"}}}},
                 {"parameters",
                  {{{"parameterId", "lr"},
                    {"doubleValueSpec", {{"minValue", 0.001}, {"maxValue", 0.2}}},
                    {"scaleType", "UNIT_LOG_SCALE"}}}},
                 {"algorithm", "RANDOM_SEARCH"}}},
               {"trialJobSpec",
                {{"workerPoolSpecs", json::array({Pool({"--steps=50"})})},
                 {"baseOutputDirectory", {{"outputUriPrefix", "gs://bkt/study"}}}}}};
  auto r = Http(server_->port(), "POST",
                std::string("/v1/") + kParent + "/hyperparameterTuningJobs", body.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const std::string name = r.body.value("name", "");
  json job = WaitForJob(server_->port(), name, {}, 540);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump(2);
  ASSERT_EQ(job["trials"].size(), 2u) << job.dump(2);
  for (const json& trial : job["trials"]) {
    ASSERT_TRUE(trial.contains("finalMeasurement")) << trial.dump(2);
    const json& metric = trial["finalMeasurement"]["metrics"][0];
    EXPECT_EQ(metric.value("metricId", ""), "loss") << trial.dump(2);
    EXPECT_EQ(trial["finalMeasurement"].value("stepCount", ""), "50") << trial.dump(2);
    // The value the trial printed is the value the study holds.
    const std::string logs = Logs(trial.value("customJob", ""));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(logs, m, std::regex(R"(loss (\S+))"))) << logs;
    EXPECT_NEAR(metric.value("value", -1.0), std::stod(m[1]), 1e-6) << logs;
    EXPECT_TRUE(fs::exists(dir_ / "buckets" / "bkt" / "study" / trial.value("id", "") / "model" /
                           "model.pt"))
        << trial.dump(2);
  }
}

}  // namespace
}  // namespace trainyard::e2e
