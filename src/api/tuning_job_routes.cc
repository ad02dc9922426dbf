// The hyperparameterTuningJobs resource on the shared resource layer (routes.h lists its routes).
// The controller (and with it Eigen) comes before cpp-httplib's header: see api_server.h.
#include "controller/tuning_job_controller.h"
// clang-format off: the order above matters
#include <httplib.h>

#include "api/route_util.h"
#include "api/routes.h"
#include "spec/hyperparameter_tuning_job_json.h"
#include "spec/resource_name.h"
// clang-format on

namespace trainyard::api {

using nlohmann::json;

ResourceDescriptor TuningJobsDescriptor() {
  ResourceDescriptor d;
  d.collection = std::string(spec::kHyperparameterTuningJobs);
  d.noun = "HyperparameterTuningJob";
  d.create_example =
      "{\"displayName\": ..., \"studySpec\": ..., \"maxTrialCount\": ..., "
      "\"parallelTrialCount\": ..., \"trialJobSpec\": ...} (docs/hp-tuning.md)";
  return d;
}

ResourceHandlers TuningJobHandlers(controller::TuningJobController* tuning) {
  ResourceHandlers h;
  h.create = [tuning](const CreateCall& call) -> StatusOr<json> {
    TY_ASSIGN_OR_RETURN(spec::HyperparameterTuningJob request,
                        spec::ParseHyperparameterTuningJob(call.body, spec::DecodeMode::kRequest));
    request.creator = call.creator;
    TY_ASSIGN_OR_RETURN(spec::HyperparameterTuningJob job,
                        tuning->Create(call.parent, std::move(request)));
    return spec::HyperparameterTuningJobToJson(job);
  };
  h.get = [tuning](const ResourceId& id) -> StatusOr<json> {
    TY_ASSIGN_OR_RETURN(spec::HyperparameterTuningJob job, tuning->Get(id.name));
    return spec::HyperparameterTuningJobToJson(job);
  };
  h.list = [tuning](const ListCall& call) -> StatusOr<ListOutput> {
    TY_ASSIGN_OR_RETURN(store::TuningJobListResult result, tuning->List(call.query));
    ListOutput out{{}, result.next_page_token};
    for (const auto& j : result.jobs) out.items.push_back(spec::HyperparameterTuningJobToJson(j));
    return out;
  };
  h.remove = [tuning](const ResourceId& id) { return tuning->Delete(id.name).status(); };
  h.cancel = [tuning](const ResourceId& id) { return tuning->Cancel(id.name); };
  return h;
}

void RegisterTuningJobRoutes(RouteTable& server, controller::TuningJobController* tuning,
                             controller::OperationController* operations) {
  RegisterResourceRoutes(server, operations, TuningJobsDescriptor(), TuningJobHandlers(tuning));
}

}  // namespace trainyard::api
