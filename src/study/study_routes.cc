#include "study/study_routes.h"

#include <httplib.h>

#include "api/route_table.h"
#include "api/route_util.h"
#include "common/json_parse.h"

namespace trainyard::study {
namespace {

using nlohmann::json;

constexpr const char* kParentPattern =
    "/v1/projects/([^/]+)/locations/([^/]+)/hyperparameterTuningJobs";
constexpr const char* kJobPattern =
    "/v1/projects/([^/]+)/locations/([^/]+)/hyperparameterTuningJobs/([^/:]+)";

std::string JobName(const httplib::Request& req) {
  return api::ParentOf(req) + "/hyperparameterTuningJobs/" + std::string(req.matches[3]);
}

}  // namespace

void RegisterStudyRoutes(api::RouteTable& server, StudyService* service) {
  using auth::Access;
  server.Post(
      kParentPattern, Access::kWrite,
      api::Guarded([service](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
        if (req.body.empty()) {
          return InvalidArgumentError(
              "request body is empty; send a HyperparameterTuningJob as JSON with "
              "displayName, studySpec, maxTrialCount, parallelTrialCount and "
              "trialJobSpec (docs/hp-tuning.md)");
        }
        StatusOr<json> body = ParseJson(req.body);
        if (!body.ok()) {
          return InvalidArgumentError("Invalid JSON payload received. " + body.status().message());
        }
        return service->Create(api::ParentOf(req), *body);
      }));

  server.Get(kParentPattern, Access::kRead,
             api::Guarded([service](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(api::CheckParams(req, {"filter", "pageSize", "pageToken"}));
               TY_ASSIGN_OR_RETURN(int64_t page_size,
                                   api::IntParam(req, "pageSize", 0, 0, 1 << 30));
               TY_ASSIGN_OR_RETURN(
                   StudyListPage page,
                   service->List(api::ParentOf(req), static_cast<int>(page_size),
                                 req.get_param_value("pageToken"), req.get_param_value("filter")));
               json out = json::object();
               if (!page.jobs.empty()) out["hyperparameterTuningJobs"] = page.jobs;
               if (!page.next_page_token.empty()) out["nextPageToken"] = page.next_page_token;
               return out;
             }));

  server.Get(kJobPattern, Access::kRead,
             api::Guarded([service](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
               return service->Get(JobName(req));
             }));

  server.Delete(kJobPattern, Access::kWrite,
                api::Guarded([service](const httplib::Request& req) -> StatusOr<json> {
                  TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
                  TY_ASSIGN_OR_RETURN(json job, service->Delete(JobName(req)));
                  return api::DoneDeleteOperation(job["name"].get<std::string>());
                }));

  server.Post(std::string(kJobPattern) + ":cancel", Access::kWrite,
              api::Guarded([service](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
                TY_RETURN_IF_ERROR(api::CheckEmptyBody(req));
                TY_RETURN_IF_ERROR(service->Cancel(JobName(req)));
                return json::object();
              }));
}

}  // namespace trainyard::study
