// The REST routes of HyperparameterTuningJobs (docs/hp-tuning.md), in Vertex AI's shape:
//   POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              Create
//   GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              List
//   GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         Get
//   DELETE /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         Delete (an
//   Operation) POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}:cancel  Cancel
// Errors are google.rpc.Status bodies through api/http_status.h; no handler throws.
#pragma once

#include "study/study_service.h"

namespace httplib {
class Server;
}

namespace trainyard::study {

// `service` must outlive the server.
void RegisterStudyRoutes(httplib::Server& server, StudyService* service);

}  // namespace trainyard::study
