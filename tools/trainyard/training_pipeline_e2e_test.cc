// Training pipelines and the model registry on the real server:
//  - the Python SDK's REST sequence (legacy-and-pipelines.md §3.3), request for request, for
//    CustomContainerTrainingJob, CustomTrainingJob (its script package uploaded through the
//    storage API first) and CustomPythonPackageTrainingJob: `?%24alt=json%3Benum-encoding%3Dint`
//    on every call, snake_case trainingTaskInputs with integers as 1.0 and null scheduling keys, a
//    GET of the pipeline right after the create and then every 5 s (shortened here) until a
//    terminal state, two more GETs, then GET models/ID@VERSION. The SDK is not packaged here, so
//    its calls are replayed; the fake executor runs the jobs and the test writes the model files
//    where the job would ($AIP_MODEL_DIR).
//  - kill -9 of the server while a pipeline's job runs (local executor): after a restart the
//    pipeline, its job and its model are all there, once.
//  - `trainyard ai models` list/describe/upload/list-version/delete-version/delete.
//  - `trainyard-bert predict --model-dir gs://...` on the artifactUri of a model a pipeline
//    trained with the real trainer (skipped without trainyard-bert and data/sample/vocab.txt).
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/evp.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <regex>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;

constexpr const char* kParent = "/v1/projects/p1/locations/us-central1";
// The Python REST transport's system parameters, as `requests` encodes them.
constexpr const char* kAlt = "?%24alt=json%3Benum-encoding%3Dint";
// training_jobs.py sleeps 5 s between polls; 200 ms keeps the test short.
constexpr auto kPollInterval = std::chrono::milliseconds(200);
constexpr const char* kCustomTask =
    "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml";
constexpr const char* kStaging = "gs://bkt1/aiplatform-custom-training-2026-11-26-02:40:00.123";

// The md5Hash python-storage sends with an upload (base64 of the digest).
std::string Md5Base64(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_md5(), nullptr);
  unsigned char b64[4 * EVP_MAX_MD_SIZE];
  const int n = EVP_EncodeBlock(b64, digest, static_cast<int>(size));
  return std::string(reinterpret_cast<char*>(b64), n);
}

// One pool as worker_spec_utils writes it: snake_case, integers as doubles, a disk spec.
json Pool(const json& task) {
  json pool = {{"replica_count", 1.0},
               {"machine_spec", {{"machine_type", "n1-standard-4"}}},
               {"disk_spec", {{"boot_disk_type", "pd-ssd"}, {"boot_disk_size_gb", 100.0}}}};
  pool.update(task);
  return pool;
}

// The create body of `.run()` (training_jobs.py): the pool(s), the staging output directory, the
// scheduling keys with nulls, enable_web_access (so the SDK also reads the backing job).
json PipelineBody(const std::string& display_name, const json& pools) {
  return {{"displayName", display_name},
          {"trainingTaskDefinition", kCustomTask},
          {"trainingTaskInputs",
           {{"worker_pool_specs", pools},
            {"base_output_directory", {{"output_uri_prefix", kStaging}}},
            {"scheduling",
             {{"timeout", "3600s"},
              {"restart_job_on_worker_restart", false},
              {"disable_retries", false},
              {"strategy", nullptr},
              {"max_wait_duration", nullptr}}},
            {"enable_web_access", false}}},
          {"modelToUpload",
           {{"displayName", display_name + "-model"},
            {"containerSpec",
             {{"imageUri", "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-0:latest"}}},
            {"versionAliases", json::array({"default"})}}}};
}

class TrainingPipelineE2ETest : public ::testing::Test {
 protected:
  struct Answer {
    int status = -1;
    json body;
    std::string text;
  };

  void StartServer(const std::vector<std::string>& args) {
    std::string error;
    std::filesystem::create_directories(dir_ / "buckets/bkt1");  // the user's staging bucket
    server_ = ServerProcess::Start(dir_ / "data", args, &error, env_);
    ASSERT_NE(server_, nullptr) << error;
  }
  // One request; the SDK's calls go to `path` + kAlt. Logged as "METHOD path -> status".
  Answer Send(const std::string& method, const std::string& path, const std::string& body = "",
              const std::string& content_type = "application/json") {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_read_timeout(60, 0);
    httplib::Result r = method == "POST" ? client.Post(path, body, content_type) : client.Get(path);
    Answer a;
    if (r) a = {r->status, json::parse(r->body, nullptr, false), r->body};
    std::string shown =
        std::regex_replace(path.substr(0, path.find('?')), std::regex("/[0-9]{6,}"), "/{id}");
    shown = std::regex_replace(shown, std::regex("^" + std::string(kParent)), "");
    log_.push_back(method + " " + shown + " -> " + std::to_string(a.status));
    return a;
  }
  // The requests made, one per line; a block of one or two lines repeated back to back (a poll)
  // is shown once, marked "(repeated)".
  std::string Log() const {
    std::string out;
    for (size_t i = 0; i < log_.size();) {
      size_t block = 1;
      for (size_t b : {size_t{1}, size_t{2}}) {
        if (i + 2 * b <= log_.size() &&
            std::equal(log_.begin() + i, log_.begin() + i + b, log_.begin() + i + b)) {
          block = b;
          break;
        }
      }
      size_t end = i + block;
      while (end + block <= log_.size() &&
             std::equal(log_.begin() + i, log_.begin() + i + block, log_.begin() + end)) {
        end += block;
      }
      std::string text;
      for (size_t k = i; k < i + block; ++k) text += (k > i ? " + " : "") + log_[k];
      out += text + (end > i + block ? " (repeated)" : "") + "\n";
      i = end;
    }
    return out;
  }
  static int StateNumber(const json& pipeline) {
    const auto it = pipeline.find("state");
    return it != pipeline.end() && it->is_number_integer() ? it->get<int>() : -1;
  }
  // Writes the files a trainer leaves in $AIP_MODEL_DIR of a job whose base output is `base`.
  void WriteModel(const std::string& base) {
    const auto dir = dir_ / "buckets" / (base.substr(5) + "/model");
    std::filesystem::create_directories(dir);
    testing::WriteFileOrDie(dir / "config.json", "{}");
    testing::WriteFileOrDie(dir / "model.safetensors", "weights");
  }

  // .run() from the create on: the pipeline's last state and the model GET's answer.
  std::pair<json, Answer> Run(const json& body) {
    Answer created = Send("POST", std::string(kParent) + "/trainingPipelines" + kAlt, body.dump());
    EXPECT_EQ(created.status, 200) << created.text;
    const std::string name = created.body.value("name", "");
    EXPECT_TRUE(std::regex_match(
        name, std::regex("projects/p1/locations/us-central1/trainingPipelines/[\\w-]+")))
        << name;
    EXPECT_EQ(created.body.value("trainingTaskDefinition", ""), kCustomTask);
    EXPECT_EQ(created.body["trainingTaskInputs"], body["trainingTaskInputs"]) << created.text;
    WriteModel(kStaging);  // the trainer's part
    json pipeline;
    for (int i = 0; i < 300; ++i) {
      pipeline = Send("GET", "/v1/" + name + kAlt).body;
      const std::string job = pipeline["trainingTaskMetadata"].value("backingCustomJob", "");
      if (!job.empty()) Send("GET", "/v1/" + job + kAlt);  // enable_web_access is in the inputs
      const int state = StateNumber(pipeline);
      if (state == 4 || state == 5 || state == 7 || state == 8) break;
      std::this_thread::sleep_for(kPollInterval);
    }
    for (int i = 0; i < 2; ++i) pipeline = Send("GET", "/v1/" + name + kAlt).body;  // has_failed
    const json model = pipeline.value("modelToUpload", json::object());
    Answer got =
        Send("GET", "/v1/" + model.value("name", "") + "@" + model.value("versionId", "") + kAlt);
    return {pipeline, got};
  }

  std::filesystem::path dir_ = testing::MakeTestDir();
  std::vector<std::string> env_ = {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()};
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> log_;
};

// The sequence every class makes once its pipeline is created.
constexpr const char* kRunSequence =
    "POST /trainingPipelines -> 200\n"
    "GET /trainingPipelines/{id} -> 200 + GET /customJobs/{id} -> 200 (repeated)\n"
    "GET /trainingPipelines/{id} -> 200 (repeated)\n"
    "GET /models/{id}@1 -> 200\n";

TEST_F(TrainingPipelineE2ETest, PythonSdkCustomContainerTrainingJob) {
  StartServer({"--executor", "fake", "--fake-run-ms", "1000"});
  json body =
      PipelineBody("x", json::array({Pool({{"containerSpec",
                                            {{"imageUri", "local"},
                                             {"command", json::array({"true"})},
                                             {"args", {"--epochs", "3"}},
                                             {"env", {{{"name", "K"}, {"value", "V"}}}}}}})}));
  auto [pipeline, model] = Run(body);
  EXPECT_EQ(Log() + std::to_string(StateNumber(pipeline)) + " " +
                std::to_string(pipeline.contains("error")) + " " +
                model.body.value("artifactUri", "") + " " + model.body.value("versionId", ""),
            std::string(kRunSequence) + "4 0 " + kStaging + "/model/ 1");
}

TEST_F(TrainingPipelineE2ETest, PythonSdkCustomTrainingJobUploadsItsScriptFirst) {
  StartServer({"--executor", "fake", "--fake-run-ms", "1000"});
  std::filesystem::create_directories(dir_ / "buckets/bkt1");  // the user's staging bucket
  // source_utils.py's sdist, uploaded by blob.upload_from_filename: multipart/related with a
  // double-quoted boundary, CRLF, the name and a client checksum in the JSON part.
  const std::string package = std::string("\x1f\x8b\x08\x00", 4) + "sdist bytes";
  const std::string object =
      "aiplatform-2026-11-26-02:40:00.123-aiplatform_custom_trainer_script-0.1.tar.gz";
  const std::string boundary = "===============7330845974216740156==";
  const std::string multipart =
      "--" + boundary + "\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n" +
      json{{"name", object}, {"md5Hash", Md5Base64(package)}}.dump() + "\r\n--" + boundary +
      "\r\ncontent-type: application/gzip\r\n\r\n" + package + "\r\n--" + boundary + "--\r\n";
  Answer uploaded = Send("POST", "/upload/storage/v1/b/bkt1/o?uploadType=multipart", multipart,
                         "multipart/related; boundary=\"" + boundary + "\"");
  ASSERT_EQ(uploaded.status, 200) << uploaded.text;
  json body = PipelineBody(
      "script",
      json::array({Pool({{"python_package_spec",
                          {{"executor_image_uri",
                            "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-1.py310:latest"},
                           {"python_module", "aiplatform_custom_trainer_script.task"},
                           {"package_uris", json::array({"gs://bkt1/" + object})},
                           {"args", json::array()},
                           {"env", json::array()}}}})}));
  log_.clear();
  auto [pipeline, model] = Run(body);
  EXPECT_EQ(uploaded.body.value("size", "") + " | " + Log() +
                std::to_string(StateNumber(pipeline)) + " " + model.body.value("displayName", ""),
            std::to_string(package.size()) + " | " + kRunSequence + "4 script-model");
}

TEST_F(TrainingPipelineE2ETest, PythonSdkCustomPythonPackageTrainingJobWithAReductionPool) {
  StartServer({"--executor", "fake", "--fake-run-ms", "1000"});
  const json package = {
      {"python_package_spec",
       {{"executor_image_uri", "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-1.py310:latest"},
        {"python_module", "trainer.task"},
        {"package_uris", json::array({"gs://bkt1/trainer-0.1.tar.gz"})},
        {"args", json::array({"--lr=0.01"})},
        {"env", json::array()}}}};
  json workers = Pool(package);
  workers["replica_count"] = 2.0;
  // chief, workers, an empty parameter-server pool ({} in the middle), a reduction server pool.
  json body =
      PipelineBody("pkg", json::array({Pool(package), workers, json::object(),
                                       Pool({{"container_spec", {{"image_uri", "local"}}}})}));
  body["trainingTaskInputs"]["worker_pool_specs"][3]["container_spec"]["command"] =
      json::array({"true"});
  auto [pipeline, model] = Run(body);
  EXPECT_EQ(Log() + std::to_string(StateNumber(pipeline)) + " " +
                model.body.value("trainingPipeline", ""),
            std::string(kRunSequence) + "4 " + pipeline.value("name", ""));
}

TEST_F(TrainingPipelineE2ETest, KillDashNineWhileAPipelineRunsLosesNothing) {
  if (!HaveLocalExecutor()) GTEST_SKIP() << "needs the local executor";
  const std::vector<std::string> args = {"--executor",           "local", "--gpus", "0",
                                         "--kill-grace-seconds", "1"};
  StartServer(args);
  json body = {{"displayName", "survivor"},
               {"trainingTaskDefinition", kCustomTask},
               {"trainingTaskInputs",
                {{"workerPoolSpecs",
                  {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                    {"replicaCount", 1},
                    {"containerSpec",
                     {{"imageUri", "local"},
                      {"command",
                       {"sh", "-c",
                        "sleep 3; d=\"$TRAINYARD_BUCKET_ROOT/${AIP_MODEL_DIR#gs://}\"; "
                        "mkdir -p \"$d\" && echo '{}' > \"$d/config.json\""}}}}}}}}},
               {"modelToUpload", {{"displayName", "survivor-model"}}}};
  Answer created = Send("POST", std::string(kParent) + "/trainingPipelines", body.dump());
  ASSERT_EQ(created.status, 200) << created.text;
  const std::string name = created.body.value("name", "");
  std::string state;
  for (int i = 0; i < 100 && state != "PIPELINE_STATE_RUNNING"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    state = Send("GET", "/v1/" + name).body.value("state", "");
  }
  ASSERT_EQ(state, "PIPELINE_STATE_RUNNING") << server_->Stderr();
  server_->Kill(SIGKILL);
  StartServer(args);
  json pipeline;
  for (int i = 0; i < 300 && state == "PIPELINE_STATE_RUNNING"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pipeline = Send("GET", "/v1/" + name).body;
    state = pipeline.value("state", "");
  }
  const std::string job = pipeline["trainingTaskMetadata"].value("backingCustomJob", "");
  const std::string model = pipeline["modelToUpload"].value("name", "");
  Answer jobs = Send("GET", std::string(kParent) + "/customJobs");
  Answer models = Send("GET", std::string(kParent) + "/models");
  Answer versions = Send("GET", "/v1/" + model + ":listVersions");
  EXPECT_EQ(state + " " + Send("GET", "/v1/" + job).body.value("state", "") + " " +
                std::to_string(jobs.body.value("customJobs", json::array()).size()) + " " +
                Send("GET", "/v1/" + model).body.value("trainingPipeline", "") + " " +
                std::to_string(models.body.value("models", json::array()).size()) + " " +
                std::to_string(versions.body.value("models", json::array()).size()),
            "PIPELINE_STATE_SUCCEEDED JOB_STATE_SUCCEEDED 1 " + name + " 1 1")
      << server_->Stderr();
}

TEST_F(TrainingPipelineE2ETest, TrainyardAiModelsSpeaksGcloud) {
  StartServer({"--executor", "fake"});
  WriteModel("gs://bkt1/run1");
  const std::string endpoint = server_->endpoint();
  const std::vector<std::string> region = {"--region=us-central1", "--project=p1"};
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.end(), region.begin(), region.end());
    return Cli(endpoint, args, env_);
  };
  auto upload =
      cli({"ai", "models", "upload", "--display-name=bert", "--model-id=bert",
           "--artifact-uri=gs://bkt1/run1/model/", "--container-image-uri=img", "--format=json"});
  auto second = cli({"ai", "models", "upload", "--display-name=bert", "--parent-model=bert",
                     "--artifact-uri=gs://bkt1/run1/model/", "--container-image-uri=img",
                     "--version-aliases=candidate"});
  auto missing = cli({"ai", "models", "upload", "--display-name=x", "--container-image-uri=img",
                      "--artifact-uri=gs://bkt1/nothing/"});
  auto list = cli({"ai", "models", "list"});
  auto describe = cli({"ai", "models", "describe", "bert@candidate", "--format=value(versionId)"});
  auto versions = cli({"ai", "models", "list-version", "bert"});
  auto dropped = cli({"ai", "models", "delete-version", "bert@2"});
  auto deleted = cli({"ai", "models", "delete", "bert"});
  auto empty = cli({"ai", "models", "list"});
  EXPECT_EQ(std::to_string(upload.exit_code) + " " +
                json::parse(upload.out, nullptr, false).dump() + " | " +
                std::to_string(second.exit_code) + second.out + " | " +
                std::to_string(missing.exit_code) + " " +
                std::to_string(missing.err.find("ERROR: (trainyard.ai.models.upload) "
                                                "INVALID_ARGUMENT: model.artifactUri: "
                                                "gs://bkt1/nothing/ does not contain a model") !=
                               std::string::npos) +
                " | " + list.out + " | " + describe.out + " | " + versions.out + " | " +
                std::to_string(dropped.exit_code) + std::to_string(deleted.exit_code) +
                dropped.out + deleted.out + deleted.err + " | " + empty.out + empty.err,
            "0 {\"@type\":\"type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse\","
            "\"model\":\"projects/p1/locations/us-central1/models/bert\",\"modelVersionId\":\"1\"}"
            " | 0 | 1 1 | "
            "MODEL_ID  DISPLAY_NAME  CREATOR\nbert      bert          anonymous\n | 2\n | "
            "MODEL_ID  VERSION_ID  DISPLAY_NAME\nbert      1           bert\nbert      2           "
            "bert\n | 00 | Listed 0 items.\n");
}

TEST_F(TrainingPipelineE2ETest, TrainyardBertPredictsWithARegisteredModelsArtifactUri) {
  const auto bert = testing::ToolPath("trainyard-bert");
  const auto vocab = testing::SourcePath("data/sample/vocab.txt");
  if (!HaveLocalExecutor() || !std::filesystem::exists(bert) || !std::filesystem::exists(vocab)) {
    GTEST_SKIP() << "needs the local executor, trainyard-bert and data/sample/vocab.txt "
                    "(scripts/fetch-sample-data.sh)";
  }
  std::filesystem::create_directories(dir_ / "buckets/data-bkt");
  for (const char* split : {"train", "eval"}) {
    std::ofstream csv(dir_ / "buckets/data-bkt" / (std::string(split) + ".csv"));
    csv << "text,label\n";
    for (int i = 0; i < 24; ++i) csv << "\"good great fine\",1\n\"bad awful poor\",0\n";
  }
  env_.push_back("PATH=" + bert.parent_path().string() + ":" + std::getenv("PATH"));
  StartServer({"--executor", "local", "--gpus", "0", "--cpus", "64", "--memory-gib", "256"});
  json body = {{"displayName", "bert"},
               {"trainingTaskDefinition", kCustomTask},
               {"trainingTaskInputs",
                {{"workerPoolSpecs",
                  {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                    {"replicaCount", 1},
                    {"containerSpec",
                     {{"imageUri", "trainyard/bert-sentiment"},
                      {"args",
                       {"--training-file=gs://data-bkt/train.csv",
                        "--validation-file=gs://data-bkt/eval.csv", "--vocab=" + vocab.string(),
                        "--text-column=text", "--label-column=label", "--epochs=1", "--threads=1",
                        "--max-length=16"}}}}}}},
                 {"baseOutputDirectory", {{"outputUriPrefix", "gs://data-bkt/run"}}}}},
               {"modelToUpload", {{"displayName", "bert-model"}}}};
  Answer created = Send("POST", std::string(kParent) + "/trainingPipelines", body.dump());
  ASSERT_EQ(created.status, 200) << created.text;
  json pipeline;
  for (int i = 0; i < 1200; ++i) {
    pipeline = Send("GET", "/v1/" + created.body.value("name", "")).body;
    const std::string state = pipeline.value("state", "");
    if (state == "PIPELINE_STATE_SUCCEEDED" || state == "PIPELINE_STATE_FAILED") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_EQ(pipeline.value("state", ""), "PIPELINE_STATE_SUCCEEDED") << pipeline.dump();
  Answer model = Send("GET", "/v1/" + pipeline["modelToUpload"].value("name", ""));
  auto predict = testing::RunProcess(
      {bert.string(), "predict", "--model-dir", model.body.value("artifactUri", ""), "--text",
       "good great fine", "--threads", "1", "--max-length", "16"},
      "", env_);
  EXPECT_EQ(model.body.value("artifactUri", "") + " " + std::to_string(predict.exit_code),
            "gs://data-bkt/run/model/ 0")
      << predict.out << predict.err;
}

}  // namespace
}  // namespace trainyard::e2e
