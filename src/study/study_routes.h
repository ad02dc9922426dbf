// The REST routes of HyperparameterTuningJobs (docs/hp-tuning.md), in Vertex AI's shape:
//   POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              Create
//   GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              List
//   GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         Get
//   DELETE /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         Delete (an
//   Operation) POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}:cancel  Cancel
// Errors are google.rpc.Status bodies through api/http_status.h; no handler throws.
#pragma once

#include "study/study_service.h"

namespace trainyard::api {
class RouteTable;  // api/route_table.h; not included: httplib.h's <resolv.h> `_res` breaks Eigen
}

namespace trainyard::study {

// `service` must outlive the server.
void RegisterStudyRoutes(api::RouteTable& server, StudyService* service);

}  // namespace trainyard::study
