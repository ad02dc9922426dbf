// What trainingPipelines and models serve beyond the layer's standard methods (those pass the
// route conformance suite, resource_routes_test.cc): the models' custom methods, versions and
// aliases over HTTP, uploads as operations polled under /ui/, a pipeline through the wire format
// of the Python SDK (%24alt=json%3Benum-encoding%3Dint, snake_case inputs, 1.0 integers), hostile
// input, and the route table's access levels.
#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/training_pipeline_controller.h"
#include "controller/tuning_job_controller.h"
// clang-format off
#include <gtest/gtest.h>
#include <httplib.h>
// clang-format on

#include <regex>

#include "api/widget_resource_testing.h"
#include "executor/fake_executor.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kLoc = "/v1/projects/p/locations/us-central1";
// What the Python SDK's REST transport (requests) puts on every call.
constexpr const char* kPyAlt = "?%24alt=json%3Benum-encoding%3Dint";

class ModelPipelineRoutesTest : public ::testing::Test {
 protected:
  struct Answer {
    int status = -1;
    json body;
    std::string text;
  };
  Answer Call(const std::string& method, const std::string& path, const std::string& body = "") {
    httplib::Client client("127.0.0.1", server_.port());
    httplib::Result r = method == "POST"     ? client.Post(path, body, "application/json")
                        : method == "PATCH"  ? client.Patch(path, body, "application/json")
                        : method == "DELETE" ? client.Delete(path)
                                             : client.Get(path);
    if (!r) return {};
    return {r->status, json::parse(r->body, nullptr, false), r->body};
  }
  // Uploads a model; the operation.
  json Upload(const json& request) {
    Answer a = Call("POST", std::string(kLoc) + "/models:upload", request.dump());
    EXPECT_EQ(a.status, 200) << a.text;
    return a.body;
  }
  // "versionId[aliases]" of each version.
  std::string Versions(const std::string& model) {
    Answer a = Call("GET", std::string(kLoc) + "/models/" + model + ":listVersions");
    std::string out;
    for (const json& v : a.body.value("models", json::array())) {
      std::string aliases;
      for (const json& x : v.value("versionAliases", json::array())) {
        aliases += (aliases.empty() ? "" : ",") + x.get<std::string>();
      }
      out += (out.empty() ? "" : " ") + v.value("versionId", "") + "[" + aliases + "]";
    }
    return out;
  }

  TestApiServer server_;
};

TEST_F(ModelPipelineRoutesTest, UploadIsADoneOperationUnderItsModelPolledUnderUi) {
  const json op = Upload(
      {{"modelId", "m1"}, {"model", {{"displayName", "bert"}, {"artifactUri", "gs://bkt/m/"}}}});
  const std::string name = op.value("name", "");
  Answer ui = Call("GET", "/ui/" + name);
  Answer encoded = Call("GET", std::string(kLoc) + "/models/m1%401");
  Answer alias = Call("GET", std::string(kLoc) + "/models/m1@default" + kPyAlt);
  EXPECT_EQ(
      std::to_string(name.starts_with("projects/p/locations/us-central1/models/m1/operations/")) +
          " " + op["done"].dump() + " " + op["metadata"].value("@type", "") + " " +
          op["response"].dump() + " | " + std::to_string(ui.status) + " " +
          std::to_string(ui.body == op) + " | " + encoded.body.value("name", "") + " " +
          encoded.body.value("versionId", "") + " " + alias.body.value("artifactUri", ""),
      "1 true type.googleapis.com/google.cloud.aiplatform.v1.UploadModelOperationMetadata "
      R"({"@type":"type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse",)"
      R"("model":"projects/p/locations/us-central1/models/m1","modelVersionId":"1"} | )"
      "200 1 | projects/p/locations/us-central1/models/m1 1 gs://bkt/m/");
}

TEST_F(ModelPipelineRoutesTest, VersionsAliasesAndTheirDeletesOverHttp) {
  Upload({{"modelId", "m"}, {"model", {{"displayName", "m"}}}});
  Upload({{"parentModel", "projects/p/locations/us-central1/models/m"},
          {"model", {{"displayName", "m"}, {"versionAliases", {"exp"}}}}});
  const std::string before = Versions("m");
  Answer patched = Call("PATCH", std::string(kLoc) + "/models/m@exp?updateMask=version_aliases",
                        R"({"versionAliases": ["default"]})");
  Answer plain = Call("GET", std::string(kLoc) + "/models/m");
  Answer deleted = Call("DELETE", std::string(kLoc) + "/models/m@1:deleteVersion");
  Answer whole_version = Call("DELETE", std::string(kLoc) + "/models/m@2");
  EXPECT_EQ(before + " | " + std::to_string(patched.status) + " " +
                plain.body.value("versionId", "") + " | " + std::to_string(deleted.status) + " " +
                deleted.body["done"].dump() + " " + deleted.body["metadata"].value("@type", "") +
                " " + Versions("m") + " | " + std::to_string(whole_version.status),
            "1[default] 2[exp] | 200 2 | 200 true "
            "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata 2[default] | "
            "400");
}

TEST_F(ModelPipelineRoutesTest, HostileInputOnTheModelRoutesIsAClear4xx) {
  Upload({{"modelId", "m"}, {"model", {{"displayName", "m"}}}});
  const std::string m = std::string(kLoc) + "/models/m";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"POST " + std::string(kLoc) + "/models:upload",
       R"({"modelId": "../x", "model": {"displayName": "m"}})"},
      {"POST " + std::string(kLoc) + "/models:upload",
       R"({"modelId": "m", "model": {"displayName": "m"}})"},
      {"POST " + std::string(kLoc) + "/models:upload",
       R"({"parent": "projects/q/locations/us-central1", "model": {"displayName": "m"}})"},
      {"POST " + std::string(kLoc) + "/models:upload",
       R"({"parentModel": "nope", "model": {"displayName": "m"}})"},
      {"POST " + std::string(kLoc) + "/models:upload",
       R"({"parentModel": "projects/p/locations/x/models/m", "model": {"displayName": "m"}})"},
      {"POST " + std::string(kLoc) + "/models:upload",
       R"({"model": {"displayName": "m", "artifactUri": 7}})"},
      {"POST " + std::string(kLoc) + "/models:upload?colour=red",
       R"({"model": {"displayName": "m"}})"},
      {"GET " + m + ":listVersions?pageSize=abc", ""},
      {"GET " + m + ":listVersions?pageToken=bm90LWEtdG9rZW4", ""},
      {"GET " + m + ":listVersions?filter=colour%3Dred", ""},
      {"GET " + std::string(kLoc) + "/models/nope:listVersions", ""},
      {"GET " + m + "@nope", ""},
      {"GET " + m + "@@1", ""},
      {"DELETE " + m + ":deleteVersion", ""},
      {"DELETE " + m + "@1:deleteVersion", ""},
      {"DELETE " + m + "@9:deleteVersion", ""},
      {"PATCH " + m + "?updateMask=artifactUri", R"({"artifactUri": "gs://x/"})"},
      {"PATCH " + m + "?updateMask=versionAliases", R"({"versionAliases": []})"},
      {"PATCH " + m + "?updateMask=labels", R"({"labels": {"A": "b"}})"},
      {"GET " + std::string(kLoc) + "/models?orderBy=display_name", ""},
  };
  std::string codes;
  for (const auto& [what, body] : cases) {
    const size_t space = what.find(' ');
    Answer a = Call(what.substr(0, space), what.substr(space + 1), body);
    codes += a.status >= 400 && a.status < 500 && a.body.contains("error")
                 ? std::to_string(a.status / 100)
                 : "[" + what + " -> " + std::to_string(a.status) + "]";
  }
  EXPECT_EQ(codes + " " + Versions("m"), std::string(cases.size(), '4') + " 1[default]");
}

constexpr const char* kSdkPipeline = R"({"displayName": "x",
  "trainingTaskDefinition": "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml",
  "trainingTaskInputs": {"worker_pool_specs": [{"replica_count": 1.0,
      "machine_spec": {"machine_type": "n1-standard-4"},
      "containerSpec": {"imageUri": "local", "command": ["true"]}}],
    "base_output_directory": {"output_uri_prefix": "gs://bkt1/out"}},
  "modelToUpload": {"displayName": "x-model", "containerSpec": {"imageUri": "SERV"},
                    "versionAliases": ["default"]}})";

TEST_F(ModelPipelineRoutesTest, APipelineInTheSdksWireFormatEndsWithItsModel) {
  const std::string pipelines = std::string(kLoc) + "/trainingPipelines";
  Answer created = Call("POST", pipelines + kPyAlt, kSdkPipeline);
  ASSERT_EQ(created.status, 200) << created.text;
  const std::string name = created.body.value("name", "");
  const std::string job = created.body["trainingTaskMetadata"].value("backingCustomJob", "");
  ASSERT_TRUE(server_.executor()
                  .Advance(job.substr(job.rfind('/') + 1), executor::GangState::kSucceeded)
                  .ok());
  server_.pipelines().PollOnce();
  Answer done = Call("GET", "/v1/" + name + kPyAlt);
  const json model_ref = done.body.value("modelToUpload", json::object());
  Answer model = Call(
      "GET", std::string(kLoc) + "/models/" +
                 model_ref.value("name", "/").substr(model_ref.value("name", "/").rfind('/') + 1) +
                 "@" + model_ref.value("versionId", "") + kPyAlt);
  Answer listed = Call("GET", pipelines + "?filter=state%3D%22PIPELINE_STATE_SUCCEEDED%22");
  EXPECT_EQ(created.body["state"].dump() + " " +
                std::to_string(created.text.find(R"("replica_count": 1.0)") != std::string::npos) +
                std::to_string(created.body["trainingTaskInputs"] ==
                               json::parse(kSdkPipeline)["trainingTaskInputs"]) +
                " " + done.body["state"].dump() + " " +
                std::to_string(done.body.contains("error")) + " | " +
                model.body.value("artifactUri", "") + " " +
                model.body.value("trainingPipeline", "") + " " +
                model.body["containerSpec"].value("imageUri", "") + " | " +
                std::to_string(listed.body.value("trainingPipelines", json::array()).size()),
            "1 11 4 0 | gs://bkt1/out/model/ " + name + " SERV | 1");
}

TEST_F(ModelPipelineRoutesTest, HostileInputOnThePipelineRoutesIsAClear4xx) {
  const std::string pipelines = std::string(kLoc) + "/trainingPipelines";
  json other = json::parse(kSdkPipeline);
  other["trainingTaskDefinition"] =
      "gs://google-cloud-aiplatform/schema/trainingjob/definition/automl_tabular_1.0.0.yaml";
  json dataset = json::parse(kSdkPipeline);
  dataset["inputDataConfig"] = {{"datasetId", "1"}};
  json not_a_spec = json::parse(kSdkPipeline);
  not_a_spec["trainingTaskInputs"] = "python train.py";
  json both = json::parse(kSdkPipeline);
  both["trainingTaskInputs"]["workerPoolSpecs"] = both["trainingTaskInputs"]["worker_pool_specs"];
  json pool_zero = json::parse(kSdkPipeline);
  pool_zero["trainingTaskInputs"]["worker_pool_specs"][0]["replica_count"] = 0.0;
  std::string got;
  for (const json& body : {other, dataset, not_a_spec, both, pool_zero}) {
    Answer a = Call("POST", pipelines, body.dump());
    const json details = a.body["error"].value("details", json::array());
    got += std::to_string(a.status) + " " +
           (details.empty() ? "-" : details[0]["fieldViolations"][0].value("field", "")) + " | ";
  }
  Answer cancel = Call("POST", pipelines + "/123:cancel", "{}");
  Answer listed = Call("GET", pipelines);
  EXPECT_EQ(got + std::to_string(cancel.status) + " " +
                std::to_string(listed.body.value("trainingPipelines", json::array()).size()),
            "400 trainingTaskDefinition | 400 inputDataConfig | 400 trainingTaskInputs | 400 - | "
            "400 trainingTaskInputs.workerPoolSpecs[0].replicaCount | 404 0");
}

TEST_F(ModelPipelineRoutesTest, TheCustomMethodsAreInTheRouteTableWithTheirAccess) {
  Answer routes = Call("GET", "/v1/routes");
  std::string seen;
  for (const json& r : routes.body.value("routes", json::array())) {
    const std::string pattern = r.value("pattern", "");
    static const std::regex kCustom("/models(/\\(\\[\\^/:\\]\\+\\))?:[A-Za-z]+$");
    if (!std::regex_search(pattern, kCustom)) continue;
    seen += r.value("method", "") + " " + pattern.substr(pattern.find("/models")) + " " +
            r.value("access", "") + "; ";
  }
  EXPECT_EQ(seen,
            "POST /models:upload write; GET /models/([^/:]+):listVersions read; "
            "DELETE /models/([^/:]+):deleteVersion write; ");
}

}  // namespace
}  // namespace trainyard::api
