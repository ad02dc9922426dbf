// AI Platform Training's jobs API (ml.googleapis.com v1) on the shared resource layer:
//   POST   /v1/projects/{p}/jobs                  {"jobId", "labels", "trainingInput"}
//   GET    /v1/projects/{p}/jobs                  ?filter&pageSize&pageToken -> {"jobs", ...}
//   GET    /v1/projects/{p}/jobs/{jobId}
//   PATCH  /v1/projects/{p}/jobs/{jobId}?updateMask=labels
//   POST   /v1/projects/{p}/jobs/{jobId}:cancel   {} (also for a job that already ended)
// No DELETE: the API has none.
// The controller (and with it Eigen) comes first: see api_server.h.
#include "controller/legacy_job_controller.h"
// clang-format off: the order above matters
#include "api/routes.h"
// clang-format on

namespace trainyard::api {

using nlohmann::json;

ResourceDescriptor LegacyJobsDescriptor() {
  ResourceDescriptor d;
  d.parent = ParentShape::kProject;
  d.collection = controller::kLegacyJobsKind;
  d.noun = "Job";
  d.create_example =
      "{\"jobId\": \"my_job_1\", \"trainingInput\": {\"region\": \"us-central1\", "
      "\"masterConfig\": {\"imageUri\": \"...\"}}}";
  d.id_field = "jobId";
  d.check_id = [](const std::string& id) { return CheckLetterDigitUnderscoreId("jobId", id); };
  // gcloud's help: "If the job is already finished, the command ... exit[s] successfully."
  d.cancel_of_ended_is_ok = true;
  // google.cloud.ml.v1.Job's fields: a PATCH body may carry the job as GET returned it.
  d.check_patch_body = PatchBodyFields(
      "job", {"jobId", "trainingInput", "predictionInput", "createTime", "startTime", "endTime",
              "state", "errorMessage", "labels", "etag", "trainingOutput", "predictionOutput",
              "jobPosition", "trainyardInfo"});
  return d;
}

ResourceHandlers LegacyJobHandlers(controller::LegacyJobController* jobs) {
  ResourceHandlers h;
  h.create = [jobs](const CreateCall& call) {
    return jobs->Create(call.parent, call.body, call.id, call.creator);
  };
  h.get = [jobs](const ResourceId& id) { return jobs->Get(id.name); };
  h.list = [jobs](const ListCall& call) -> StatusOr<ListOutput> {
    if (!call.order_by.empty()) {
      return InvalidFieldError("orderBy", "only the default order (newest first) is supported");
    }
    TY_ASSIGN_OR_RETURN(store::ResourcePage page, jobs->List(call.query));
    ListOutput out{{}, page.next_page_token};
    for (const auto& record : page.jobs) out.items.push_back(record.body);
    return out;
  };
  h.cancel = [jobs](const ResourceId& id) { return jobs->Cancel(id.name); };
  h.patch = [jobs](const ResourceId& id, const json& patch, const std::vector<std::string>& mask) {
    return jobs->Patch(id.name, patch, mask);
  };
  return h;
}

void RegisterLegacyJobRoutes(RouteTable& routes, controller::LegacyJobController* jobs,
                             controller::OperationController* operations) {
  RegisterResourceRoutes(routes, operations, LegacyJobsDescriptor(), LegacyJobHandlers(jobs));
}

}  // namespace trainyard::api
