#include <gtest/gtest.h>

#include "spec/model.h"
#include "spec/training_pipeline.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;

// CustomContainerTrainingJob.run() as the Python SDK sends it (legacy-and-pipelines.md §3.3):
// snake_case keys, a camelCase containerSpec, integers as 1.0, null scheduling keys, an empty
// middle pool.
constexpr const char* kSdkBody = R"({"displayName": "x",
  "trainingTaskDefinition": "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml",
  "trainingTaskInputs": {
    "worker_pool_specs": [
      {"replica_count": 1.0,
       "machine_spec": {"machine_type": "n1-standard-4", "accelerator_type": "NVIDIA_TESLA_T4", "accelerator_count": 1.0},
       "disk_spec": {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 100.0},
       "containerSpec": {"imageUri": "IMG", "command": ["python3"], "args": ["-m", "t"], "env": [{"name": "K", "value": "V"}]}},
      {},
      {"replica_count": 2.0, "machine_spec": {"machine_type": "n1-standard-4"},
       "python_package_spec": {"executor_image_uri": "EXEC", "python_module": "trainer.task",
                               "package_uris": ["gs://b/p.tar.gz"], "args": [], "env": []}}],
    "base_output_directory": {"output_uri_prefix": "gs://bkt1/aiplatform-custom-training-2026-11-26-02:40:00.123"},
    "scheduling": {"timeout": "3600s", "restart_job_on_worker_restart": false, "disable_retries": false, "strategy": null, "max_wait_duration": null},
    "enable_web_access": false},
  "modelToUpload": {"displayName": "x-model", "containerSpec": {"imageUri": "SERV"}, "versionAliases": ["default"]}})";

TEST(TrainingPipelineJsonTest, SdkSpellingIsEchoedVerbatimAndDecodedAsACustomJobSpec) {
  auto pipeline = DecodeTrainingPipeline(kSdkBody);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  auto spec = TrainingTaskSpec(*pipeline);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& pools = spec->worker_pool_specs;
  EXPECT_EQ(
      (*pipeline)["trainingTaskInputs"].dump() + "\n" + std::to_string(pools.size()) + " " +
          std::to_string(pools[0].replica_count) + " " + pools[0].machine_spec->accelerator_type +
          "x" + std::to_string(pools[0].machine_spec->accelerator_count) + " " +
          pools[0].container_spec->image_uri + " " + pools[0].container_spec->env[0].name + " " +
          std::to_string(pools[1].IsEmpty()) + " " + pools[2].python_package_spec->package_uris[0] +
          " " + spec->base_output_directory + " " + (*pipeline)["modelToUpload"].dump(),
      json::parse(kSdkBody)["trainingTaskInputs"].dump() +
          "\n3 1 NVIDIA_TESLA_T4x1 IMG K 1 gs://b/p.tar.gz "
          "gs://bkt1/aiplatform-custom-training-2026-11-26-02:40:00.123 "
          R"({"containerSpec":{"imageUri":"SERV"},"displayName":"x-model","versionAliases":["default"]})");
}

TEST(TrainingPipelineJsonTest, NodeCamelCaseAndADefaultModelName) {
  auto pipeline = DecodeTrainingPipeline(R"({"labels": {}, "displayName": "node-tp",
    "trainingTaskDefinition": "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml",
    "trainingTaskInputs": {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": 1, "containerSpec": {"imageUri": "local", "args": ["--epochs=3"]}}]},
    "modelToUpload": {"labels": {}, "containerSpec": {"imageUri": "img"}},
    "state": 3, "name": "ignored"})");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_EQ(pipeline->dump(),
            R"({"displayName":"node-tp","modelToUpload":{"containerSpec":{"imageUri":"img"},)"
            R"("displayName":"node-tp"},"trainingTaskDefinition":"gs://google-cloud-aiplatform/)"
            R"(schema/trainingjob/definition/custom_task_1.0.0.yaml","trainingTaskInputs":)"
            R"({"workerPoolSpecs":[{"containerSpec":{"args":["--epochs=3"],"imageUri":"local"},)"
            R"("machineSpec":{"machineType":"n1-standard-4"},"replicaCount":1}]}})");
}

// Each bad request: the error's first words (the field path) and its code.
TEST(TrainingPipelineJsonTest, ErrorsNameTheFieldPath) {
  const json good = json::parse(kSdkBody);
  std::vector<json> bodies(8, good);
  bodies[0]["trainingTaskDefinition"] =
      "gs://google-cloud-aiplatform/schema/trainingjob/definition/automl_tables_1.0.0.yaml";
  bodies[1]["trainingTaskInputs"]["worker_pool_specs"][0]["replica_count"] = 1.5;
  bodies[2]["trainingTaskInputs"]["worker_pool_specs"][0]["machine_spec"]["machineTyp"] = "x";
  bodies[3]["inputDataConfig"] = {{"datasetId", "123"}};
  bodies[4].erase("trainingTaskInputs");
  bodies[5]["modelToUpload"]["versionAliases"] = {"Default"};
  bodies[6]["modelId"] = "9lives";
  bodies[7]["trainingTaskInputs"]["worker_pool_specs"] = json::array();
  std::string got;
  for (const json& body : bodies) {
    Status s = DecodeTrainingPipeline(body.dump()).status();
    got += s.message().substr(0, s.message().find_first_of(": ")) + " ";
  }
  EXPECT_EQ(got,
            "trainingTaskDefinition Invalid Invalid inputDataConfig trainingTaskInputs "
            "modelToUpload.versionAliases[0] modelId trainingTaskInputs.workerPoolSpecs ");
  Status other = DecodeTrainingPipeline(bodies[0].dump()).status();
  EXPECT_NE(other.message().find("automl_tables_1.0.0.yaml"), std::string::npos) << other;
}

TEST(TrainingPipelineJsonTest, JobStatesMirrorAsPipelineStates) {
  std::string got;
  for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kSucceeded,
                     JobState::kCancelling, JobState::kExpired}) {
    got += std::string(PipelineStateOfJob(s)) + " ";
  }
  EXPECT_EQ(got + std::to_string(ParsePipelineState("PIPELINE_STATE_PAUSED")),
            "PIPELINE_STATE_QUEUED PIPELINE_STATE_RUNNING PIPELINE_STATE_SUCCEEDED "
            "PIPELINE_STATE_CANCELLING PIPELINE_STATE_FAILED 8");
}

TEST(ModelJsonTest, UploadRequestInEitherSpellingDropsOutputOnlyFields) {
  auto r = ParseUploadModelRequest(R"({"parent_model": "projects/p/locations/l/models/m",
    "model": {"display_name": "m", "artifact_uri": "gs://bkt/model/", "labels": {"k": "v"},
              "container_spec": {"image_uri": "img", "ports": [{"container_port": 8080.0}],
                                 "startupProbe": {"exec": {"command": ["true"]}}},
              "version_aliases": ["v-1"], "versionId": "3", "etag": "x", "metadata": {"a": [1]}},
    "serviceAccount": "sa@p.iam.gserviceaccount.com"})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(
      r->parent_model + " " + r->model.dump(),
      "projects/p/locations/l/models/m "
      R"({"artifactUri":"gs://bkt/model/","containerSpec":{"imageUri":"img","ports":)"
      R"([{"containerPort":8080}],"startupProbe":{"exec":{"command":["true"]}}},)"
      R"("displayName":"m","labels":{"k":"v"},"metadata":{"a":[1]},"versionAliases":["v-1"]})");
}

TEST(ModelJsonTest, BadUploadsNameTheField) {
  std::string got;
  for (
      const char* body : {
          R"({})",
          R"({"model": {}})",
          R"({"model": {"displayName": "m", "artifactUrl": "gs://b"}})",
          R"({"model": {"displayName": "m", "containerSpec": {"command": ["x"]}}})",
          R"({"model": {"displayName": "m", "versionAliases": ["ab", "ab"]}})",
          R"({"model": {"displayName": "m", "containerSpec": {"imageUri": "i", "ports": [{"containerPort": 0}]}}})",
          R"({"modelId": "My-Model", "model": {"displayName": "m"}})",
          R"({"model": {"displayName": "m", "encryptionSpec": {"kmsKeyName": "k"}}})",
      }) {
    Status s = ParseUploadModelRequest(body).status();
    got += s.message().substr(0, s.message().find_first_of(": ")) + " ";
  }
  EXPECT_EQ(got,
            "model model.displayName Invalid model.containerSpec.imageUri "
            "model.versionAliases[1] model.containerSpec.ports[0].containerPort modelId "
            "model.encryptionSpec ");
}

}  // namespace
// Vertex's 128 is characters, not bytes: 128 two-byte characters are a valid displayName.
TEST(TrainingPipelineJsonTest, DisplayNameIsAtMost128Characters) {
  std::string got;
  for (size_t n : {128, 129}) {
    json body = json::parse(kSdkBody);
    std::string name;
    for (size_t i = 0; i < n; ++i) name += "\u00e9";
    body["displayName"] = name;
    got += DecodeTrainingPipeline(body.dump()).status().ToString().substr(0, 30) + " | ";
  }
  EXPECT_EQ(got, "OK | INVALID_ARGUMENT: displayName: | ");
}

// Issue 43: sizes, negative container values and artifact URIs are refused when decoded, each
// naming its field (they were stored, and a pipeline's failed only after training).
TEST(ModelJsonTest, Issue43LimitsNegativesAndArtifactUrisNameTheField) {
  const std::string big(kMaxModelDescriptionChars + 1, 'x');
  std::string got;
  for (const json& model : std::vector<json>{
           {{"displayName", ""}},
           {{"displayName", std::string(kMaxModelDisplayNameChars + 1, 'x')}},
           {{"displayName", "m"}, {"description", big}},
           {{"displayName", "m"}, {"versionDescription", big}},
           {{"displayName", "m"}, {"artifactUri", "file:///etc/"}},
           {{"displayName", "m"}, {"artifactUri", "gs://../etc"}},
           {{"displayName", "m"}, {"artifactUri", "/srv/models/m"}},
           {{"displayName", "m"},
            {"containerSpec", {{"imageUri", "i"}, {"deploymentTimeout", "-5s"}}}},
           {{"displayName", "m"},
            {"containerSpec", {{"imageUri", "i"}, {"sharedMemorySizeMb", -1}}}},
           {{"displayName", "m"}, {"metadata", {{"b", std::string(kMaxModelVersionBytes, 'x')}}}},
       }) {
    Status s = DecodeModel(model, "modelToUpload").status();
    got += s.message().substr(0, s.message().find_first_of(": ")) + " ";
  }
  auto ok = DecodeModel({{"displayName", std::string(kMaxModelDisplayNameChars, 'x')},
                         {"artifactUri", "gs://bkt/model/"},
                         {"containerSpec", {{"imageUri", "i"}, {"deploymentTimeout", "0s"}}}},
                        "model");
  EXPECT_EQ(got + ok.status().ToString(),
            "modelToUpload.displayName modelToUpload.displayName modelToUpload.description "
            "modelToUpload.versionDescription modelToUpload.artifactUri "
            "modelToUpload.artifactUri modelToUpload.artifactUri "
            "modelToUpload.containerSpec.deploymentTimeout "
            "modelToUpload.containerSpec.sharedMemorySizeMb modelToUpload OK");
}

}  // namespace trainyard::spec
