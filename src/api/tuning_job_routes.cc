// The hyperparameterTuningJobs routes (routes.h lists them), in the shape of the customJobs ones.
// The controller (and with it Eigen) comes before cpp-httplib's header: see api_server.h.
#include "controller/tuning_job_controller.h"
// clang-format off: the order above matters
#include <httplib.h>

#include "api/route_util.h"
#include "api/routes.h"
#include "spec/hyperparameter_tuning_job_json.h"
// clang-format on

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kParentPattern =
    "/v1/projects/([^/]+)/locations/([^/]+)/hyperparameterTuningJobs";
constexpr const char* kJobPattern =
    "/v1/projects/([^/]+)/locations/([^/]+)/hyperparameterTuningJobs/([^/:]+)";

std::string JobName(const httplib::Request& req) {
  return ParentOf(req) + "/hyperparameterTuningJobs/" + std::string(req.matches[3]);
}

}  // namespace

void RegisterTuningJobRoutes(RouteTable& server, controller::TuningJobController* tuning) {
  using auth::Access;
  server.Post(kParentPattern, Access::kWrite,
              Guarded([tuning](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {}));
                if (req.body.empty()) {
                  return InvalidArgumentError(
                      "request body is empty; send a HyperparameterTuningJob as JSON with "
                      "displayName, studySpec, maxTrialCount, parallelTrialCount and "
                      "trialJobSpec (docs/hp-tuning.md)");
                }
                TY_ASSIGN_OR_RETURN(
                    spec::HyperparameterTuningJob request,
                    spec::ParseHyperparameterTuningJob(req.body, spec::DecodeMode::kRequest));
                TY_ASSIGN_OR_RETURN(spec::HyperparameterTuningJob job,
                                    tuning->Create(ParentOf(req), std::move(request)));
                return spec::HyperparameterTuningJobToJson(job);
              }));

  server.Get(kParentPattern, Access::kRead,
             Guarded([tuning](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {"filter", "pageSize", "pageToken"}));
               TY_ASSIGN_OR_RETURN(store::ListQuery q, ListQueryOf(req));
               TY_ASSIGN_OR_RETURN(store::TuningJobListResult result, tuning->List(q));
               return ListResponse("hyperparameterTuningJobs", result.jobs, result.next_page_token,
                                   [](const spec::HyperparameterTuningJob& j) {
                                     return spec::HyperparameterTuningJobToJson(j);
                                   });
             }));

  server.Get(kJobPattern, Access::kRead,
             Guarded([tuning](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               TY_ASSIGN_OR_RETURN(spec::HyperparameterTuningJob job, tuning->Get(JobName(req)));
               return spec::HyperparameterTuningJobToJson(job);
             }));

  server.Delete(
      kJobPattern, Access::kWrite, Guarded([tuning](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(CheckParams(req, {}));
        TY_ASSIGN_OR_RETURN(spec::HyperparameterTuningJob job, tuning->Delete(JobName(req)));
        return DoneDeleteOperation(job.name);
      }));

  server.Post(std::string(kJobPattern) + ":cancel", Access::kWrite,
              Guarded([tuning](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {}));
                TY_RETURN_IF_ERROR(CheckEmptyBody(req));
                TY_RETURN_IF_ERROR(tuning->Cancel(JobName(req)));
                return json::object();
              }));
}

}  // namespace trainyard::api
