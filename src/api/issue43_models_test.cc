// Regression tests of issue 43, items 4 and 5, over HTTP: each request below was answered 200
// (or failed only after training) before the fix. The store and registry sides are in
// store/jobs_db_schema_test.cc (version rows, migration) and controller/model_registry_test.cc
// (version cap, artifact errors).
#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/training_pipeline_controller.h"
#include "controller/tuning_job_controller.h"
// clang-format off
#include <gtest/gtest.h>
#include <httplib.h>
// clang-format on

#include "api/widget_resource_testing.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kLoc = "/v1/projects/p/locations/us-central1";

class Issue43Test : public ::testing::Test {
 protected:
  // "<status> <first field violation or message>".
  std::string Call(const std::string& method, const std::string& path,
                   const std::string& body = "") {
    httplib::Client client("127.0.0.1", server_.port());
    httplib::Result r = method == "POST"    ? client.Post(path, body, "application/json")
                        : method == "PATCH" ? client.Patch(path, body, "application/json")
                                            : client.Get(path);
    if (!r) return "no answer";
    last_ = json::parse(r->body, nullptr, false);
    if (r->status == 200) return "200";
    const json error = last_.value("error", json::object());
    const json details = error.value("details", json::array());
    return std::to_string(r->status) + " " +
           (details.empty() || !details[0].contains("fieldViolations")
                ? error.value("message", "")
                : details[0]["fieldViolations"][0].value("field", ""));
  }
  void UploadModel(const std::string& id) {
    ASSERT_EQ(Call("POST", std::string(kLoc) + "/models:upload",
                   json{{"modelId", id}, {"model", {{"displayName", id}}}}.dump()),
              "200");
  }
  // A pipeline body with `model` as its modelToUpload (and `model_id` unless "").
  static std::string Pipeline(const json& model, const std::string& model_id = "") {
    json p = {{"displayName", "x"},
              {"trainingTaskDefinition",
               "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"},
              {"trainingTaskInputs",
               {{"workerPoolSpecs",
                 {{{"replicaCount", 1},
                   {"machineSpec", {{"machineType", "n1-standard-4"}}},
                   {"containerSpec", {{"imageUri", "local"}, {"command", {"true"}}}}}}}}},
              {"modelToUpload", model}};
    if (!model_id.empty()) p["modelId"] = model_id;
    return p.dump();
  }

  TestApiServer server_;
  json last_;
};

TEST_F(Issue43Test, AnAtVersionIsRefusedWhereAResourceHasNoVersions) {
  UploadModel("m");
  ASSERT_EQ(
      Call("POST", std::string(kLoc) + "/widgets", R"({"widgetId": "w", "displayName": "a"})"),
      "200");
  std::string got = Call("GET", std::string(kLoc) + "/customJobs/123@x");
  got += " | " + Call("GET", "/v1/projects/p/jobs/j1@1");
  got += " | " + Call("PATCH", std::string(kLoc) + "/widgets/w%40x?updateMask=displayName",
                      R"({"displayName": "b"})");
  got += " | " + Call("GET", std::string(kLoc) + "/widgets/w");
  got += " " + last_.value("displayName", "");
  got += " | " + Call("GET", std::string(kLoc) + "/models/m@1");
  got += " | " + Call("GET", std::string(kLoc) + "/models/m@");
  EXPECT_EQ(got, "400 name | 400 name | 400 name | 200 a | 200 | 400 name");
}

TEST_F(Issue43Test, UnknownFieldsInAPatchBodyAre400AsAtCreate) {
  UploadModel("m");
  const std::string model = Call("PATCH", std::string(kLoc) + "/models/m?updateMask=displayName",
                                 R"({"displayName": "n", "bogusField": 1})");
  const std::string message = last_["error"].value("message", "");
  EXPECT_EQ(model + " | " + message + " | " +
                Call("PATCH", "/v1/projects/p/jobs/j1?updateMask=labels", R"({"bogusField": 1})") +
                " | " +
                Call("PATCH", std::string(kLoc) + "/models/m?updateMask=displayName",
                     R"({"display_name": "n", "versionId": "1", "etag": "x"})"),
            "400 model | Invalid JSON payload received. Unknown name \"bogusField\" at 'model': "
            "Cannot find field. | 400 job | 200");
}

TEST_F(Issue43Test, AnUpdateMaskCannotClearARequiredField) {
  UploadModel("m");
  ASSERT_EQ(
      Call("POST", std::string(kLoc) + "/widgets", R"({"widgetId": "w", "displayName": "a"})"),
      "200");
  EXPECT_EQ(Call("PATCH", std::string(kLoc) + "/models/m?updateMask=displayName",
                 R"({"displayName": ""})") +
                " | " +
                Call("PATCH", std::string(kLoc) + "/models/m?updateMask=displayName", "{}") +
                " | " +
                Call("PATCH", std::string(kLoc) + "/models/m?updateMask=labels",
                     R"({"labels": {"k": "v"}})") +
                " | " +
                Call("PATCH", std::string(kLoc) + "/widgets/w?updateMask=displayName",
                     R"({"displayName": ""})"),
            "400 displayName | 400 displayName | 200 | 400 displayName");
}

TEST_F(Issue43Test, ModelStringsHaveVertexsSizeLimits) {
  auto upload = [&](const json& model) {
    return Call("POST", std::string(kLoc) + "/models:upload", json{{"model", model}}.dump());
  };
  EXPECT_EQ(upload({{"displayName", std::string(200 * 1024, 'x')}}) + " | " +
                upload({{"displayName", std::string(128, 'x')}}) + " | " +
                upload({{"displayName", "m"}, {"versionDescription", std::string(8193, 'x')}}) +
                " | " + upload({{"displayName", "m"}, {"description", std::string(8193, 'x')}}) +
                " | " +
                upload({{"displayName", "m"}, {"metadata", {{"blob", std::string(70000, 'x')}}}}),
            "400 model.displayName | 200 | 400 model.versionDescription | 400 model.description | "
            "400 model");
}

TEST_F(Issue43Test, ContainerSizesAndDurationsMustNotBeNegative) {
  auto upload = [&](const json& container) {
    return Call("POST", std::string(kLoc) + "/models:upload",
                json{{"model", {{"displayName", "m"}, {"containerSpec", container}}}}.dump());
  };
  EXPECT_EQ(
      upload({{"imageUri", "i"}, {"deploymentTimeout", "-5s"}}) + " | " +
          upload({{"imageUri", "i"}, {"sharedMemorySizeMb", -1}}) + " | " +
          upload({{"imageUri", "i"}, {"deploymentTimeout", "5s"}, {"sharedMemorySizeMb", 0}}),
      "400 model.containerSpec.deploymentTimeout | 400 model.containerSpec.sharedMemorySizeMb "
      "| 200");
}

TEST_F(Issue43Test, APipelinesArtifactUriAndModelIdAreCheckedAtCreate) {
  UploadModel("taken");
  const std::string pipelines = std::string(kLoc) + "/trainingPipelines";
  const json model = {{"displayName", "m"}, {"containerSpec", {{"imageUri", "SERV"}}}};
  json etc = model, dots = model, ok = model;
  etc["artifactUri"] = "file:///etc/";
  dots["artifactUri"] = "gs://../etc";
  ok["artifactUri"] = "gs://bkt/model/";
  std::string got = Call("POST", pipelines, Pipeline(etc));
  got += " | " + Call("POST", pipelines, Pipeline(dots));
  got += " | " + Call("POST", pipelines, Pipeline(ok, "fresh"));
  // The first pipeline has not ended: its modelId is claimed, as an existing model's is.
  got += " | " + Call("POST", pipelines, Pipeline(ok, "fresh")).substr(0, 3);
  got += " " + last_["error"].value("message", "").substr(0, 25);
  got += " | " + Call("POST", pipelines, Pipeline(ok, "taken")).substr(0, 3);
  EXPECT_EQ(got,
            "400 modelToUpload.artifactUri | 400 modelToUpload.artifactUri | 200 | 409 modelId: "
            "TrainingPipeline | 409");
}

TEST_F(Issue43Test, AWaitTimeoutInTheQueryIsReadAndChecked) {
  ASSERT_EQ(Call("POST", std::string(kLoc) + "/models:upload",
                 R"({"modelId": "m", "model": {"displayName": "m"}})"),
            "200");
  const std::string op = "/v1/" + last_.value("name", "");
  EXPECT_EQ(Call("POST", op + ":wait?timeout=zz") + " | " + Call("POST", op + ":wait?timeout=1s") +
                " | " + Call("POST", op + ":wait?timeout=1s", R"({"timeout": "1s"})"),
            "400 timeout | 200 | 400 timeout");
}

}  // namespace
}  // namespace trainyard::api
