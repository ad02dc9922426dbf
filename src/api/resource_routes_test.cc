// The route conformance suite (resource_routes_conformance.h) over every resource on the shared
// resource layer: customJobs, hyperparameterTuningJobs, AI Platform's jobs (a parent without a
// location, client-chosen ids, no delete), trainingPipelines, models (created by :upload), and
// "widgets" — a resource defined only in a test file (widget_resource_testing.h: fields, rules,
// codec), which gets every route from the layer without further code.
#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/legacy_job_controller.h"
#include "controller/training_pipeline_controller.h"
#include "controller/tuning_job_controller.h"
// clang-format off
#include <httplib.h>
// clang-format on

#include <thread>

#include "api/resource_routes_conformance.h"
#include "api/routes.h"
#include "api/widget_resource_testing.h"
#include "executor/fake_executor.h"
#include "spec/training_pipeline.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

// ---- A server on port 0 with every controller, and the widget's routes ------------------------

class Server : public ServedResource {
 public:
  explicit Server(std::string resource) : resource_(std::move(resource)) {
    descriptor_ = resource_ == "customJobs"          ? CustomJobsDescriptor()
                  : resource_ == "widgets"           ? WidgetDescriptor()
                  : resource_ == "jobs"              ? LegacyJobsDescriptor()
                  : resource_ == "trainingPipelines" ? TrainingPipelinesDescriptor()
                  : resource_ == "models"            ? ModelsDescriptor()
                                                     : TuningJobsDescriptor();
  }

  int port() const override { return server_.port(); }
  const ResourceDescriptor& descriptor() const override { return descriptor_; }
  std::string parent() const override {
    return resource_ == "jobs" ? "projects/p" : "projects/p/locations/us-central1";
  }
  bool StartsUnended() const override { return resource_ != "models"; }
  bool Patchable() const override {
    return resource_ == "widgets" || resource_ == "jobs" || resource_ == "models";
  }
  bool Deletable() const override { return resource_ != "jobs"; }
  std::string NameOf(const json& item) const override {
    if (resource_ != "jobs") return ServedResource::NameOf(item);
    return parent() + "/jobs/" + item.value("jobId", "");
  }
  std::string DisplayNameOf(const json& item) const override {
    return resource_ == "jobs" ? item.value("jobId", "?") : ServedResource::DisplayNameOf(item);
  }
  std::string CreateVerb() const override { return resource_ == "models" ? ":upload" : ""; }
  std::string CreatedName(const json& answer) const override {
    if (resource_ != "models") return NameOf(answer);
    return answer.value("response", json::object()).value("model", "");
  }

  std::string ValidBody(const std::string& id, const std::string& display_name,
                        const std::map<std::string, std::string>& labels) const override {
    if (resource_ == "jobs") {  // the jobId is the display name
      return json{{"jobId", display_name},
                  {"labels", labels},
                  {"trainingInput",
                   {{"region", "us-central1"},
                    {"masterConfig", {{"imageUri", "local"}, {"containerCommand", {"true"}}}}}}}
          .dump();
    }
    json body = {{"displayName", display_name}, {"labels", labels}};
    if (resource_ == "models") return json{{"model", body}}.dump();
    if (resource_ == "widgets") {
      body["widgetId"] = id;
    } else if (resource_ == "trainingPipelines") {
      body["trainingTaskDefinition"] = std::string(spec::kCustomTaskDefinition);
      body["trainingTaskInputs"] = JobSpec();
    } else if (resource_ == "customJobs") {
      body["jobSpec"] = JobSpec();
    } else {
      body["studySpec"] = {
          {"metrics", {{{"metricId", "m"}, {"goal", "MAXIMIZE"}}}},
          {"parameters",
           {{{"parameterId", "x"}, {"doubleValueSpec", {{"minValue", 0}, {"maxValue", 1}}}}}},
          {"algorithm", "RANDOM_SEARCH"}};
      body["maxTrialCount"] = 1;
      body["parallelTrialCount"] = 1;
      body["trialJobSpec"] = JobSpec();
    }
    return body.dump();
  }

  std::string InvalidBody(std::string* field) const override {
    json body = json::parse(ValidBody("w1", "bad", {}));
    if (resource_ == "jobs") {
      body["trainingInput"]["scaleTier"] = "HUGE";
      *field = "trainingInput.scaleTier";
    } else if (resource_ == "widgets") {
      body["sizeCm"] = 5000;
      *field = "sizeCm";
    } else if (resource_ == "models") {
      body["model"]["containerSpec"] = {{"imageUri", "i"}, {"ports", {{{"containerPort", 0}}}}};
      *field = "model.containerSpec.ports[0].containerPort";
    } else if (resource_ == "trainingPipelines") {
      body["trainingTaskInputs"]["workerPoolSpecs"][0]["replicaCount"] = "two";
      *field = "trainingTaskInputs.workerPoolSpecs[0].replicaCount";
    } else if (resource_ == "customJobs") {
      body["jobSpec"]["workerPoolSpecs"][0]["replicaCount"] = "two";
      *field = "jobSpec.workerPoolSpecs[0].replicaCount";
    } else {
      body["maxTrialCount"] = -3;
      *field = "maxTrialCount";
    }
    return body.dump();
  }

  Status End(const std::string& name) override {
    const std::string id = name.substr(name.rfind('/') + 1);
    if (resource_ == "customJobs") {
      StatusOr<spec::CustomJob> job = server_.jobs().Get(name);
      if (job.ok() && spec::IsTerminal(job->state)) return Status::Ok();
      return server_.executor().Advance(id, executor::GangState::kSucceeded);
    }
    if (resource_ == "jobs") {
      TY_ASSIGN_OR_RETURN(std::string backing, server_.legacy().BackingName(name));
      StatusOr<spec::CustomJob> job = server_.jobs().Get(backing);
      if (job.ok() && !spec::IsTerminal(job->state)) {
        TY_RETURN_IF_ERROR(server_.executor().Advance(job->Id(), executor::GangState::kSucceeded));
      }
      return server_.legacy().Get(name).status();
    }
    if (resource_ == "widgets") {
      Status s = server_.widgets().Cancel(name);
      return s.code() == StatusCode::kFailedPrecondition ? Status::Ok() : s;
    }
    if (resource_ == "models") return Status::Ok();
    if (resource_ == "trainingPipelines") {
      // A pipeline's job on the fake executor is still queued: its cancel ends both.
      Status s = server_.pipelines().Cancel(name);
      return s.code() == StatusCode::kFailedPrecondition ? Status::Ok() : s;
    }
    Status s = server_.tuning().Cancel(name);
    if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) return s;
    server_.tuning().PollOnce();  // sees its trial cancelled
    StatusOr<spec::HyperparameterTuningJob> job = server_.tuning().Get(name);
    if (job.ok() && spec::IsTerminal(job->state)) return Status::Ok();
    return FailedPreconditionError(
        name + " did not end: " +
        (job.ok() ? std::string(spec::JobStateName(job->state)) : job.status().ToString()));
  }

 private:
  static json JobSpec() {
    return {{"workerPoolSpecs",
             {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
               {"replicaCount", "1"},
               {"containerSpec", {{"imageUri", "local"}, {"command", {"true"}}}}}}}};
  }

  std::string resource_;
  TestApiServer server_;
  ResourceDescriptor descriptor_;
};

ServedResourceFactory Served(const std::string& resource) {
  return {resource, [resource] { return std::make_unique<Server>(resource); }};
}

INSTANTIATE_TEST_SUITE_P(Layer, ResourceRoutesConformanceTest,
                         ::testing::Values(Served("customJobs"), Served("hyperparameterTuningJobs"),
                                           Served("jobs"), Served("trainingPipelines"),
                                           Served("models"), Served("widgets")),
                         ServedResourceFactory::Name);

// ---- What only some resources have ------------------------------------------------------------

class WidgetRoutesTest : public ::testing::Test {
 protected:
  std::pair<int, json> Call(const std::string& method, const std::string& path,
                            const std::string& body = "") {
    httplib::Client client("127.0.0.1", server_.port());
    httplib::Result r = method == "POST"    ? client.Post(path, body, "application/json")
                        : method == "PATCH" ? client.Patch(path, body, "application/json")
                                            : client.Get(path);
    if (!r) return {-1, json()};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  const std::string kWidgets = "/v1/projects/p/locations/us-central1/widgets";
  Server server_{"widgets"};
};

TEST_F(WidgetRoutesTest, ClientChosenIdsAreCheckedAndADuplicateIs409) {
  auto [s1, created] = Call("POST", kWidgets, R"({"widgetId":"w_1","displayName":"a"})");
  auto [s2, duplicate] = Call("POST", kWidgets, R"({"widget_id":"w_1","displayName":"b"})");
  auto [s3, slash] = Call("POST", kWidgets, R"({"widgetId":"a/../b","displayName":"c"})");
  auto [s4, missing] = Call("POST", kWidgets, R"({"displayName":"d"})");
  EXPECT_EQ(
      std::to_string(s1) + " " + created.value("name", "") + " | " + std::to_string(s2) + " " +
          duplicate["error"].value("status", "") + " | " + std::to_string(s3) + " " +
          slash["error"]["details"][0]["fieldViolations"][0].value("field", "") + " | " +
          std::to_string(s4) + " " + missing["error"].value("message", ""),
      "200 projects/p/locations/us-central1/widgets/w_1 | 409 ALREADY_EXISTS | 400 widgetId | "
      "400 widgetId: required: the id of the new Widget");
}

TEST_F(WidgetRoutesTest, ALocationThatIsNoRegionIs400WithTheNearest) {
  auto [created, body] = Call("POST", "/v1/projects/p/locations/us-centrall/widgets",
                              R"({"widgetId":"w_2","displayName":"a"})");
  auto [listed, list] = Call("GET", "/v1/projects/p/locations/mars/widgets");
  auto [local, ok] = Call("GET", "/v1/projects/p/locations/local/widgets");
  EXPECT_EQ(std::to_string(created) + " " + body["error"].value("message", "") + " | " +
                std::to_string(listed) + " " +
                list["error"]["details"][0]["fieldViolations"][0].value("field", "") + " | " +
                std::to_string(local),
            "400 parent: 'us-centrall' is not a region Trainyard knows; did you mean "
            "'us-central1'? (Vertex AI's training regions, or 'local') | 400 parent | 200");
}

// `curl -d '{...}'` sends no Content-Type of JSON (it says form-urlencoded): the body is still
// the JSON resource, never read as query parameters.
TEST_F(WidgetRoutesTest, AJsonBodySentAsAFormIsStillTheResource) {
  httplib::Client client("127.0.0.1", server_.port());
  httplib::Result r = client.Post(kWidgets, R"({"widgetId":"w_4","displayName":"a"})",
                                  "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body, nullptr, false).value("name", ""),
            "projects/p/locations/us-central1/widgets/w_4");
}

TEST_F(WidgetRoutesTest, NotFoundNamesTheRegionWhereTheResourceIs) {
  ASSERT_EQ(Call("POST", kWidgets, R"({"widgetId":"w_3","displayName":"a"})").first, 200);
  auto [status, body] = Call("GET", "/v1/projects/p/locations/europe-west4/widgets/w_3");
  EXPECT_EQ(status, 404);
  const std::string message = body["error"].value("message", "");
  EXPECT_TRUE(
      message.ends_with("; it is in region us-central1: "
                        "projects/p/locations/us-central1/widgets/w_3 (pass "
                        "--region=us-central1)"))
      << message;
  auto [nowhere, none] = Call("GET", "/v1/projects/p/locations/europe-west4/widgets/w_9");
  EXPECT_EQ(nowhere, 404);
  EXPECT_EQ(none["error"].value("message", "").find("it is in region"), std::string::npos);
}

TEST_F(WidgetRoutesTest, VersionsOfAnUnversionedResourceAre400AndPatchChangesOnlyTheMask) {
  ASSERT_EQ(
      Call("POST", kWidgets, R"({"widgetId":"w2","displayName":"a","labels":{"k":"v"}})").first,
      200);
  auto [s1, at] = Call("GET", kWidgets + "/w2@1");
  auto [s2, encoded] = Call("GET", kWidgets + "/w2%401");
  auto [s3, patched] = Call("PATCH", kWidgets + "/w2?updateMask=labels",
                            R"({"labels":{"k":"w"},"displayName":"z"})");
  auto [s4, refused] = Call("PATCH", kWidgets + "/w2?updateMask=sizeCm", R"({"sizeCm":3})");
  auto [s5, no_mask] = Call("PATCH", kWidgets + "/w2", R"({"labels":{}})");
  EXPECT_EQ(std::to_string(s1) + " " +
                at["error"]["details"][0]["fieldViolations"][0].value("field", "") + " | " +
                std::to_string(s2) + " | " + std::to_string(s3) + " " + patched["labels"].dump() +
                " " + patched.value("displayName", "") + " | " + std::to_string(s4) + " " +
                refused["error"]["details"][0]["fieldViolations"][0].value("field", "") + " | " +
                std::to_string(s5),
            "400 name | 400 | 200 {\"k\":\"w\"} a | 400 updateMask | 400");
}

TEST_F(WidgetRoutesTest, OperationsListWaitCancelAndDelete) {
  ASSERT_EQ(Call("POST", kWidgets, R"({"widgetId":"w3","displayName":"a"})").first, 200);
  ASSERT_EQ(Call("POST", kWidgets + "/w3:cancel", "{}").first, 200);
  httplib::Client client("127.0.0.1", server_.port());
  auto deleted = client.Delete(kWidgets + "/w3");
  ASSERT_TRUE(deleted && deleted->status == 200);
  const std::string op = json::parse(deleted->body).value("name", "");
  auto [s1, list] =
      Call("GET", "/v1/projects/p/locations/us-central1/operations?filter=state%3DDONE");
  auto [s2, waited] = Call("POST", "/v1/" + op + ":wait", R"({"timeout":"1s"})");
  auto [s3, cancelled] = Call("POST", "/ui/" + op + ":cancel", "{}");
  auto forgotten = client.Delete("/v1/" + op);
  auto [s4, gone] = Call("GET", "/v1/" + op);
  EXPECT_EQ(std::to_string(s1) + " " + std::to_string(list["operations"].size()) + " " +
                std::to_string(s2) + " " + waited["done"].dump() + " " + std::to_string(s3) + " " +
                std::to_string(forgotten ? forgotten->status : -1) + " " + std::to_string(s4),
            "200 1 200 true 200 200 404");
}

}  // namespace
}  // namespace trainyard::api
