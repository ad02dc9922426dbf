// The REST routes of the JobService subset Trainyard serves (docs/api.md, docs/hp-tuning.md).
// RegisterRoutes is the one place where routes are added to the HTTP server. Each resource is a
// ResourceDescriptor + ResourceHandlers on the shared resource layer (resource_routes.h: the
// standard methods, their parameters, errors and delete operations in one implementation); its
// handlers decode with its spec/ codec and call its controller. Operations: operation_routes.h.
// customJobs (routes.cc):
//   POST   /v1/projects/{p}/locations/{l}/customJobs              CreateCustomJob
//   GET    /v1/projects/{p}/locations/{l}/customJobs              ListCustomJobs
//   GET    /v1/projects/{p}/locations/{l}/customJobs/{id}         GetCustomJob
//   DELETE /v1/projects/{p}/locations/{l}/customJobs/{id}         DeleteCustomJob (an Operation)
//   POST   /v1/projects/{p}/locations/{l}/customJobs/{id}:cancel  CancelCustomJob
//   GET    /v1/projects/{p}/locations/{l}/customJobs/{id}:logs    Trainyard: read/stream logs
// hyperparameterTuningJobs (tuning_job_routes.cc):
//   POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              Create
//   GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              List (filter,
//          pageSize, pageToken: the customJobs syntax and tokens)
//   GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         Get
//   DELETE /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         Delete (an
//          Operation)
//   POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}:cancel  Cancel
// AI Platform Training jobs (legacy_job_routes.cc; ml.googleapis.com v1, no location):
//   POST   /v1/projects/{p}/jobs                  Create (client-chosen jobId)
//   GET    /v1/projects/{p}/jobs                  List
//   GET    /v1/projects/{p}/jobs/{id}             Get
//   PATCH  /v1/projects/{p}/jobs/{id}             Patch (?updateMask=labels)
//   POST   /v1/projects/{p}/jobs/{id}:cancel      Cancel ({} also for an ended job)
// trainingPipelines (training_pipeline_routes.cc): create, list (filter, pageSize, pageToken),
//   get, :cancel, delete (an Operation) on the layer; the custom task only
// models (model_routes.cc):
//   POST   /v1/projects/{p}/locations/{l}/models:upload                UploadModel (an Operation
//          named .../models/{id}/operations/{op}, done when answered)
//   GET    /v1/projects/{p}/locations/{l}/models                       ListModels
//   GET    /v1/projects/{p}/locations/{l}/models/{id}[@version|alias]  GetModel
//   PATCH  /v1/projects/{p}/locations/{l}/models/{id}[@version]        UpdateModel
//   DELETE /v1/projects/{p}/locations/{l}/models/{id}                  DeleteModel (an Operation)
//   GET    /v1/projects/{p}/locations/{l}/models/{id}:listVersions     ListModelVersions
//   DELETE /v1/projects/{p}/locations/{l}/models/{id}@{v}:deleteVersion  DeleteModelVersion (an
//          Operation)
// endpoints (endpoint_routes.cc): create (a done operation), list, get, patch, delete on the
//   layer; :deployModel, :undeployModel, :mutateDeployedModel, :predict, :rawPredict
// batchPredictionJobs (batch_prediction_routes.cc): create (the job itself, as Vertex), list,
//   get, :cancel, delete (an Operation) on the layer
// operations (operation_routes.h): GET/list/:wait/:cancel/DELETE under /v1/, /v1beta1/ and /ui/
//   GET    /healthz                                                (public)
//   GET    /readyz        (public; ApiServerOptions::readiness, server/readiness.h)
//   GET    /v1/routes                       Trainyard: every route and its access (admin)
//   GET    /v1/projects/{p}/auditLogs       Trainyard: the audit log of a project (admin)
//   /trainyard/v1/tokens[/{id}]            Trainyard: token administration (admin; auth_routes.h)
// the console's extensions (directory_routes.h): GET /v1/caller, /v1/projects, /v1/machineTypes
#pragma once

#include "api/api_server.h"
#include "api/resource_routes.h"

namespace trainyard::api {

// Registers every route above. The controllers and `long_polls` (the slots of the routes that
// wait; long_poll_slots.h) must outlive the server.
void RegisterRoutes(RouteTable& routes, const ApiControllers& controllers,
                    const ApiServerOptions& options, LongPollSlots* long_polls);

// The two resource families; RegisterRoutes calls both.
void RegisterCustomJobRoutes(RouteTable& routes, controller::JobController* controller,
                             controller::OperationController* operations,
                             const ApiServerOptions& options, LongPollSlots* long_polls);
void RegisterTuningJobRoutes(RouteTable& routes, controller::TuningJobController* tuning,
                             controller::OperationController* operations);

// Each resource on the layer: where it lives and what it does.
ResourceDescriptor CustomJobsDescriptor();
ResourceHandlers CustomJobHandlers(controller::JobController* controller);
ResourceDescriptor TuningJobsDescriptor();
ResourceHandlers TuningJobHandlers(controller::TuningJobController* tuning);
ResourceDescriptor LegacyJobsDescriptor();
ResourceHandlers LegacyJobHandlers(controller::LegacyJobController* jobs);
void RegisterLegacyJobRoutes(RouteTable& routes, controller::LegacyJobController* jobs,
                             controller::OperationController* operations);
ResourceDescriptor TrainingPipelinesDescriptor();
ResourceHandlers TrainingPipelineHandlers(controller::TrainingPipelineController* pipelines);
ResourceDescriptor ModelsDescriptor();
// OK when the model (version "" = any of its versions) may be deleted; FAILED_PRECONDITION
// naming the endpoint it is deployed to otherwise.
using ModelInUse = std::function<Status(const std::string& model, const std::string& version)>;
ResourceHandlers ModelHandlers(controller::ModelRegistry* models,
                               controller::OperationController* operations,
                               const ModelInUse& in_use = nullptr);
ResourceDescriptor EndpointsDescriptor();
ResourceHandlers EndpointHandlers(controller::EndpointController* endpoints);
ResourceDescriptor BatchPredictionJobsDescriptor();
ResourceHandlers BatchPredictionJobHandlers(controller::BatchPredictionController* jobs);

}  // namespace trainyard::api
