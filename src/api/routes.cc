#include "api/routes.h"

#include <httplib.h>

#include <thread>

#include "api/auth_routes.h"
#include "api/directory_routes.h"
#include "api/operation_routes.h"
#include "api/resource_routes.h"
#include "api/route_util.h"
#include "common/time.h"
#include "controller/endpoint_controller.h"
#include "controller/job_controller.h"
#include "replica_contract/replica_contract.h"
#include "spec/custom_job_json.h"
#include "spec/resource_name.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kJobPattern = "/v1/projects/([^/]+)/locations/([^/]+)/customJobs/([^/:]+)";

std::string JobName(const httplib::Request& req) {
  return spec::ResourceName::Of({req.matches[1], req.matches[2]}, spec::kCustomJobs, req.matches[3])
      .ToString();
}

std::string TaskName(const executor::LogLine& line) {
  return replica_contract::TaskName(line.pool_index, line.replica_index);
}

}  // namespace

void RegisterRoutes(RouteTable& server, const ApiControllers& controllers,
                    const ApiServerOptions& options, LongPollSlots* long_polls) {
  using auth::Access;
  server.Get("/healthz", Access::kPublic, Guarded([](const httplib::Request&) -> StatusOr<json> {
               return json{{"status", "SERVING"}};
             }));
  server.Get("/readyz", Access::kPublic,
             Guarded([check = options.readiness](const httplib::Request&) -> StatusOr<json> {
               if (check) TY_RETURN_IF_ERROR(check());
               return json{{"status", "READY"}};
             }));
  RegisterCustomJobRoutes(server, controllers.custom_jobs, controllers.operations, options,
                          long_polls);
  if (controllers.tuning_jobs) {
    RegisterTuningJobRoutes(server, controllers.tuning_jobs, controllers.operations);
  }
  if (controllers.legacy_jobs) {
    RegisterLegacyJobRoutes(server, controllers.legacy_jobs, controllers.operations);
  }
  if (controllers.models) {
    ModelInUse in_use;
    if (controllers.endpoints) {
      in_use = [endpoints = controllers.endpoints](const std::string& model,
                                                   const std::string& version) {
        return endpoints->CheckNotDeployed(model, version);
      };
    }
    RegisterResourceRoutes(server, controllers.operations, ModelsDescriptor(),
                           ModelHandlers(controllers.models, controllers.operations, in_use));
  }
  if (controllers.training_pipelines) {
    RegisterResourceRoutes(server, controllers.operations, TrainingPipelinesDescriptor(),
                           TrainingPipelineHandlers(controllers.training_pipelines));
  }
  if (controllers.endpoints) {
    RegisterResourceRoutes(server, controllers.operations, EndpointsDescriptor(),
                           EndpointHandlers(controllers.endpoints));
  }
  if (controllers.batch_predictions) {
    RegisterResourceRoutes(server, controllers.operations, BatchPredictionJobsDescriptor(),
                           BatchPredictionJobHandlers(controllers.batch_predictions));
  }
  RegisterOperationRoutes(server, controllers.operations, long_polls);
  RegisterAuthRoutes(server, options.auth);
  RegisterDirectoryRoutes(server, controllers.directory,
                          controllers.custom_jobs ? controllers.custom_jobs->images() : nullptr);
}

ResourceDescriptor CustomJobsDescriptor() {
  ResourceDescriptor d;
  d.collection = std::string(spec::kCustomJobs);
  d.noun = "CustomJob";
  d.create_example = "{\"displayName\": \"...\", \"jobSpec\": {\"workerPoolSpecs\": [...]}}";
  d.list_params = {"readMask"};
  return d;
}

ResourceHandlers CustomJobHandlers(controller::JobController* controller) {
  ResourceHandlers h;
  h.create = [controller](const CreateCall& call) -> StatusOr<json> {
    TY_ASSIGN_OR_RETURN(spec::CustomJob request,
                        spec::ParseCustomJob(call.body, spec::DecodeMode::kRequest));
    request.trainyard_info = spec::TrainyardInfo{};
    request.trainyard_info->creator = call.creator;
    TY_ASSIGN_OR_RETURN(spec::CustomJob job, controller->Create(call.parent, request));
    return spec::CustomJobToJson(job);
  };
  h.get = [controller](const ResourceId& id) -> StatusOr<json> {
    TY_ASSIGN_OR_RETURN(spec::CustomJob job, controller->Get(id.name));
    return spec::CustomJobToJson(job);
  };
  h.list = [controller](const ListCall& call) -> StatusOr<ListOutput> {
    TY_ASSIGN_OR_RETURN(store::ListResult result, controller->List(call.query));
    ListOutput out{{}, result.next_page_token};
    for (const auto& j : result.jobs) out.items.push_back(spec::CustomJobToJson(j));
    return out;
  };
  h.remove = [controller](const ResourceId& id) { return controller->Delete(id.name).status(); };
  h.cancel = [controller](const ResourceId& id) { return controller->Cancel(id.name); };
  return h;
}

void RegisterCustomJobRoutes(RouteTable& server, controller::JobController* controller,
                             controller::OperationController* operations,
                             const ApiServerOptions& options, LongPollSlots* long_polls) {
  using auth::Access;
  RegisterResourceRoutes(server, operations, CustomJobsDescriptor(), CustomJobHandlers(controller));

  const int max_wait = options.max_log_wait_seconds;
  server.Get(
      std::string(kJobPattern) + ":logs", Access::kRead,
      Guarded([controller, max_wait, long_polls](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(CheckParams(req, {"after", "pageSize", "taskName", "waitSeconds"}));
        TY_ASSIGN_OR_RETURN(int64_t after, IntParam(req, "after", -1, -1, INT64_MAX));
        TY_ASSIGN_OR_RETURN(int64_t page_size, IntParam(req, "pageSize", 1000, 1, 10000));
        TY_ASSIGN_OR_RETURN(int64_t wait, IntParam(req, "waitSeconds", 0, 0, max_wait));
        const std::string task = req.get_param_value("taskName");
        const std::string name = JobName(req);
        // Without a slot the page is read once, as if the wait had elapsed (long_poll_slots.h).
        const LongPollSlots::Slot slot =
            wait > 0 ? long_polls->TryAcquire() : LongPollSlots::Slot();
        if (!slot) wait = 0;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait);
        json entries = json::array();
        controller::LogPage page;
        while (true) {
          TY_ASSIGN_OR_RETURN(page, controller->ReadLogs(name, after, static_cast<int>(page_size)));
          for (const auto& line : page.lines) {
            if (!task.empty() && TaskName(line) != task) continue;
            entries.push_back({{"cursor", std::to_string(line.offset)},
                               {"time", FormatTimestamp(line.time)},
                               {"taskName", TaskName(line)},
                               {"stream", line.is_stderr ? "stderr" : "stdout"},
                               {"text", line.text}});
          }
          after = page.next_cursor;
          bool ended = spec::IsTerminal(page.state);
          if (!entries.empty() || ended || std::chrono::steady_clock::now() >= deadline) {
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        bool done = spec::IsTerminal(page.state) && page.lines.empty();
        return json{{"entries", entries},
                    {"nextCursor", std::to_string(after)},
                    {"jobState", std::string(spec::JobStateName(page.state))},
                    {"done", done}};
      }));
}

}  // namespace trainyard::api
