// "widgets": a resource that exists only for tests of the shared resource layer. It is nothing but
// its fields, rules and codec (below) — no routes, store or CLI code of its own — and gets every
// route (api/resource_routes.h), the store (controller/stored_resource.h) and the CLI verbs
// (tools/trainyard/resource_commands.h) from the layer. Test-only.
//
//   Widget {name, displayName (required), labels, sizeCm (1..1000, default 10), color (RED, GREEN),
//           state (WIDGET_ACTIVE -> WIDGET_RETIRED by cancel), createTime, updateTime}
//   POST /v1/projects/{p}/locations/{l}/widgets {"widgetId": ..., ...} (client-chosen id)
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "api/resource_routes.h"
#include "common/status.h"
#include "controller/stored_resource.h"
#include "store/list_filter.h"

namespace trainyard::executor {
class FakeExecutor;
}
namespace trainyard::controller {
class JobController;
class TuningJobController;
class LegacyJobController;
class ModelRegistry;
class TrainingPipelineController;
}  // namespace trainyard::controller

namespace trainyard::api {

const store::StateVocabulary& WidgetStates();
StatusOr<nlohmann::json> DecodeWidget(const std::string& body);
controller::ResourceType WidgetType();
ResourceDescriptor WidgetDescriptor();

// A server on 127.0.0.1 (port 0) over memory stores with every controller — custom jobs on the
// FakeExecutor, HP-tuning jobs, AI Platform jobs, operations — and the widgets' routes.
// Test-only.
// FakeExecutor, HP-tuning jobs, operations, models (every gs:// artifactUri counts as existing),
// training pipelines (polled by their tests: PollOnce) — and the widgets' routes. Test-only.
class TestApiServer {
 public:
  // `auth`: tokens and audit log (none by default: every caller may do everything).
  explicit TestApiServer(AuthOptions auth = {});
  ~TestApiServer();

  int port() const { return port_; }
  executor::FakeExecutor& executor();
  controller::JobController& jobs();
  controller::TuningJobController& tuning();
  controller::StoredResourceController& widgets();
  controller::LegacyJobController& legacy();
  controller::ModelRegistry& models();
  controller::TrainingPipelineController& pipelines();

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace trainyard::api
