#include "api/widget_resource_testing.h"

#include <atomic>

#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/legacy_job_controller.h"
#include "controller/tuning_job_controller.h"
// clang-format off
#include "controller/operation_controller.h"
#include "controller/training_pipeline_controller.h"
#include "executor/fake_executor.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"
// clang-format on

#include "protojson/parse.h"
#include "protojson/reader.h"

namespace trainyard::api {

using nlohmann::json;

const store::StateVocabulary& WidgetStates() {
  static const store::StateVocabulary kStates{"widget state", "WIDGET_ACTIVE",
                                              [](std::string_view n) -> std::optional<int64_t> {
                                                if (n == "WIDGET_ACTIVE") return 1;
                                                if (n == "WIDGET_RETIRED") return 2;
                                                return std::nullopt;
                                              }};
  return kStates;
}

namespace {

enum class Color { kRed, kGreen };
constexpr protojson::EnumEntry<Color> kColors[] = {{"RED", 1, Color::kRed},
                                                   {"GREEN", 2, Color::kGreen}};
constexpr protojson::EnumType<Color> kColorType{"test.Widget.Color", kColors};

}  // namespace

// {displayName (required), labels, sizeCm (1..1000), color}; output-only fields ignored.
StatusOr<json> DecodeWidget(const std::string& body) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
  TY_ASSIGN_OR_RETURN(auto r,
                      protojson::ObjectReader::Open(
                          j, "", {"displayName", "labels", "sizeCm", "color"},
                          {"widgetId", "name", "state", "createTime", "updateTime"}, "widget"));
  TY_RETURN_IF_ERROR(r.Require("displayName"));
  json out = json::object();
  std::string display_name;
  TY_RETURN_IF_ERROR(r.String("displayName", &display_name));
  out["displayName"] = display_name;
  std::map<std::string, std::string> labels;
  TY_RETURN_IF_ERROR(r.StringMap("labels", &labels));
  if (!labels.empty()) out["labels"] = labels;
  int32_t size = 10;
  TY_RETURN_IF_ERROR(r.Int32("sizeCm", &size));
  if (size < 1 || size > 1000)
    return protojson::FieldError(r.PathOf("sizeCm"), "must be 1 to 1000");
  out["sizeCm"] = size;
  Color color = Color::kRed;
  TY_RETURN_IF_ERROR(r.Enum("color", kColorType, &color));
  out["color"] = std::string(kColorType.NameOf(color));
  return out;
}

controller::ResourceType WidgetType() {
  controller::ResourceType t;
  t.kind = "widgets";
  t.noun = "Widget";
  t.decode = DecodeWidget;
  t.states = &WidgetStates();
  t.initial_state = "WIDGET_ACTIVE";
  t.ended_states = {"WIDGET_RETIRED"};
  t.cancelled_state = "WIDGET_RETIRED";
  t.patchable = {"labels", "displayName"};
  t.required = {"displayName"};
  return t;
}

ResourceDescriptor WidgetDescriptor() {
  ResourceDescriptor d;
  d.collection = "widgets";
  d.noun = "Widget";
  d.create_example = "{\"displayName\": \"w\"}";
  d.id_field = "widgetId";
  d.check_id = [](const std::string& id) { return CheckLetterDigitUnderscoreId("widgetId", id); };
  d.cancel_of_ended_is_ok = true;
  d.check_patch_body =
      PatchBodyFields("widget", {"displayName", "labels", "sizeCm", "color", "widgetId", "name",
                                 "state", "createTime", "updateTime"});
  return d;
}

struct TestApiServer::Parts {
  store::MemoryJobStore store;
  executor::FakeExecutor executor;
  spec::ImageCatalog images = spec::ImageCatalog::BuiltIn();
  controller::OperationController operations{&store};
  controller::StoredResourceController widgets{&store, WidgetType()};
  std::unique_ptr<controller::JobController> jobs;
  std::unique_ptr<controller::TuningJobController> tuning;
  std::unique_ptr<controller::LegacyJobController> legacy;
  controller::ModelRegistry models{&store, [](const std::string&) { return Status::Ok(); }};
  std::unique_ptr<controller::TrainingPipelineController> pipelines;
  std::unique_ptr<ApiServer> server;
  std::atomic<bool> served{false};  // Serve() has returned
};

TestApiServer::TestApiServer(AuthOptions auth) : parts_(std::make_unique<Parts>()) {
  Parts& p = *parts_;
  p.jobs = std::make_unique<controller::JobController>(
      &p.store, &p.executor, &p.images, nullptr,
      controller::JobControllerOptions{testing::MakeTestDir() / "jobs"});
  if (!p.jobs->Start().ok()) std::abort();
  controller::TuningJobControllerOptions topts;
  topts.poll_interval = std::chrono::milliseconds(0);
  p.tuning = std::make_unique<controller::TuningJobController>(&p.store, p.jobs.get(), topts);
  if (!p.tuning->Start().ok()) std::abort();
  p.legacy =
      std::make_unique<controller::LegacyJobController>(&p.store, p.jobs.get(), p.tuning.get());
  if (!p.legacy->Start().ok()) std::abort();
  controller::TrainingPipelineOptions popts;
  popts.poll_interval = std::chrono::milliseconds(0);
  p.pipelines = std::make_unique<controller::TrainingPipelineController>(&p.store, p.jobs.get(),
                                                                         &p.models, popts);
  if (!p.pipelines->Start().ok()) std::abort();
  ApiServerOptions options;
  options.port = 0;
  options.auth = std::move(auth);
  ApiControllers controllers;
  controllers.custom_jobs = p.jobs.get();
  controllers.tuning_jobs = p.tuning.get();
  controllers.operations = &p.operations;
  controllers.legacy_jobs = p.legacy.get();
  controllers.models = &p.models;
  controllers.training_pipelines = p.pipelines.get();
  p.server = std::make_unique<ApiServer>(controllers, options);
  RegisterResourceRoutes(p.server->routes(), &p.operations, WidgetDescriptor(),
                         StoredResourceHandlers(&p.widgets));
  StatusOr<int> port = p.server->Bind();
  if (!port.ok()) std::abort();
  port_ = *port;
  thread_ = std::thread([this] {
    parts_->server->Serve();
    parts_->served = true;
  });
}

TestApiServer::~TestApiServer() {
  // A Stop that lands before the listener loop has started is lost (a test that sends no request
  // ends that early), so it is repeated until Serve returns.
  while (!parts_->served) {
    parts_->server->Stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  thread_.join();
}

executor::FakeExecutor& TestApiServer::executor() { return parts_->executor; }
controller::TuningJobController& TestApiServer::tuning() { return *parts_->tuning; }
controller::JobController& TestApiServer::jobs() { return *parts_->jobs; }
controller::StoredResourceController& TestApiServer::widgets() { return parts_->widgets; }
controller::LegacyJobController& TestApiServer::legacy() { return *parts_->legacy; }
controller::ModelRegistry& TestApiServer::models() { return parts_->models; }
controller::TrainingPipelineController& TestApiServer::pipelines() { return *parts_->pipelines; }

}  // namespace trainyard::api
