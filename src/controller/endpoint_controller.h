// EndpointController: the single writer of Endpoints (spec/endpoint.h) and of the models deployed
// to them. An endpoint is a stored resource (StoredResourceController, kind "endpoints"); each
// model deployed to it runs as serving replicas, one CustomJob of the JobController each (so
// replicas get the users, limits, logs, re-adoption and restarts of training replicas), and the
// ReplicaRouter (serving_proxy/replica_router.h) health-checks them and forwards predictions.
//
// A deployed model's runtime is chosen at deploy, from its Model:
//   - native: artifacts `trainyard-bert train` exported (config.json, vocab.txt and
//     model.safetensors or pytorch_model.bin at artifactUri), and the model's container is none,
//     the native image (trainyard/bert-serve) or one of Vertex's prebuilt prediction images
//     (.../prediction/...): each replica runs `trainyard-bert serve` (image trainyard/bert-serve);
//   - custom container: any other containerSpec.imageUri, run with its command, args ($(VAR)
//     expanded against its env and the serving variables), env, predictRoute and healthRoute;
//   - refused at deploy (FAILED_PRECONDITION saying what to use instead): a prebuilt prediction
//     image over artifacts that are not a BERT classifier (a TorchServe model.mar, a scikit-learn
//     pickle), a model without containerSpec whose artifacts are not one, an automatic-resources
//     model of Vertex's AutoML.
// Every replica gets Vertex's serving variables (replica_contract/serving_contract.h), with
// AIP_HTTP_PORT a free port of this host that the server picked (replicas share the host's
// network: a container must listen on $AIP_HTTP_PORT).
//
// Deploy (an operation under the endpoint, answered not done): the request is checked (model and
// version exist, runtime, traffic split, JobController::Validate of a replica's job) and stored
// in the endpoint's runtime state as DEPLOYING; the poll pass creates minReplicaCount replica jobs
// and, once that many answer their health route, publishes the DeployedModel in deployedModels,
// applies the traffic split and finishes the operation with DeployModelResponse. Three replica
// failures before that, or a replica job that waits deploy_queue_timeout for room on the host,
// fail the operation with the reason (and its jobs are cancelled).
// Undeploy: the traffic split changes and the model leaves deployedModels at once (so no request
// is routed to it), its jobs are cancelled, and the operation finishes once they ended.
//
// Running: a replica job that ends (crash beyond its restarts, timeout, killed) is replaced by a
// new one, for as long as the model is deployed. Autoscaling: between minReplicaCount and
// maxReplicaCount, one more replica when the requests in flight per replica stay above
// kTargetInFlight, one fewer after a minute below half of it.
//
// Crash safety: replica job ids are stored before the jobs are created (a restart finds them,
// re-adopted by the JobController); after a restart the poll pass re-registers every replica with
// the router and replaces those that ended meanwhile. A deploy or undeploy whose operation a
// restart aborted (OperationController::Start) is rolled back or completed: a DEPLOYING model is
// removed, an UNDEPLOYING one finished. Start() must run after JobController::Start and
// OperationController::Start.
//
// Thread-safety: all methods may be called concurrently; one mutex serialises changes.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/periodic_thread.h"
#include "common/status.h"
#include "controller/job_controller.h"
#include "controller/model_registry.h"
#include "controller/operation_controller.h"
#include "controller/stored_resource.h"
#include "serving_proxy/replica_router.h"
#include "store/resource_store.h"

namespace trainyard::controller {

// The labels of a serving replica's job (values: the endpoint's and deployed model's ids).
inline constexpr char kEndpointLabel[] = "trainyard-endpoint";
inline constexpr char kDeployedModelLabel[] = "trainyard-deployed-model";
// The image of the native runtime (spec/image_catalog.h: `trainyard-bert serve`).
inline constexpr char kNativeServingImage[] = "trainyard/bert-serve";
// Autoscaling's target of requests in flight per replica.
inline constexpr double kTargetInFlight = 4.0;

enum class ServingRuntime { kNative, kCustomContainer };

struct EndpointControllerOptions {
  std::chrono::milliseconds poll_interval{500};  // 0 = no thread (tests call PollOnce)
  // The machine type of automaticResources and of a dedicatedResources without one.
  std::string default_machine_type = "n1-standard-2";
  // Which runtime serves a model's artifacts: kNative when `artifact_uri` holds a BERT
  // classifier (see the top of this file). Null = look at the files under the bucket root.
  std::function<bool(const std::string& artifact_uri)> is_bert_classifier;
  // A free TCP port of this host for a replica. Null = executor::PickFreeTcpPort.
  std::function<StatusOr<int>()> pick_port;
  std::string project_number = "0";  // AIP_PROJECT_NUMBER
  // A deploy fails (RESOURCE_EXHAUSTED) when a replica's job waits this long for room on the
  // host; a deployed model's replacement or extra replica may wait without bound.
  std::chrono::milliseconds deploy_queue_timeout{60000};
  // Non-empty: deploys are refused (FAILED_PRECONDITION) with this reason (a server whose
  // executor runs replicas on hosts it does not forward to).
  std::string no_serving_reason;
  StoredResourceController::Clock clock;
};

class EndpointController {
 public:
  // Everything given must outlive the controller.
  EndpointController(store::ResourceStore* store, JobController* jobs, ModelRegistry* models,
                     OperationController* operations, serving_proxy::ReplicaRouter* router,
                     EndpointControllerOptions options);
  ~EndpointController();

  // Loads the endpoints, settles deploys a restart interrupted, starts the poll thread.
  Status Start();
  void Stop();

  // The endpoints as stored resources (get, list).
  StoredResourceController& stored() { return endpoints_; }
  // Where predictions are forwarded (RouteFor's group).
  serving_proxy::ReplicaRouter* router() { return router_; }

  // Stores a new endpoint (spec::DecodeEndpoint); a trafficSplit on create is INVALID_ARGUMENT
  // (no model is deployed yet).
  StatusOr<nlohmann::json> Create(const std::string& parent, const std::string& body,
                                  const std::optional<spec::Creator>& creator);
  // displayName, description, labels, trafficSplit (checked against the deployed models).
  StatusOr<nlohmann::json> Patch(const std::string& name, const nlohmann::json& patch,
                                 const std::vector<std::string>& update_mask);
  // FAILED_PRECONDITION while models are deployed or being deployed (undeploy them first).
  Status Delete(const std::string& name);

  // Starts a deploy; returns its operation (not done). Errors as described at the top.
  StatusOr<nlohmann::json> DeployModel(const std::string& endpoint, const std::string& body,
                                       const std::optional<spec::Creator>& creator);
  // Starts an undeploy; returns its operation (not done). NOT_FOUND for a model not deployed
  // here, FAILED_PRECONDITION when it would keep traffic.
  StatusOr<nlohmann::json> UndeployModel(const std::string& endpoint, const std::string& body);
  // Changes a deployed model's replica counts, autoscaling targets or display name (the
  // mutable fields of Vertex's mutateDeployedModel); returns its done operation.
  StatusOr<nlohmann::json> MutateDeployedModel(const std::string& endpoint,
                                               const std::string& body);

  // OK when no endpoint has `model` (projects/P/locations/L/models/M) deployed or being
  // deployed — its version `version`, or any version when "" — so it may be deleted;
  // FAILED_PRECONDITION naming the endpoint and the deployed model otherwise (as Vertex).
  Status CheckNotDeployed(const std::string& model, const std::string& version);

  // The deployed model a prediction for `endpoint` goes to (by trafficSplit), with its
  // ReplicaRouter group. FAILED_PRECONDITION when the endpoint takes no traffic; NOT_FOUND for
  // an unknown endpoint.
  struct Route {
    std::string group;
    nlohmann::json deployed_model;  // id, model, modelVersionId, displayName
    std::string model_display_name;
  };
  StatusOr<Route> RouteFor(const std::string& endpoint, const std::string& deployed_model_id = "");

  // One pass over every endpoint with deployments (the thread's body; tests call it).
  void PollOnce();

 private:
  struct Deployment;
  StatusOr<nlohmann::json> ResolveModel(const std::string& endpoint, const std::string& model,
                                        std::string* version);
  // The serving settings (runtime, image, routes, ...) a deployment of `model` stores;
  // FAILED_PRECONDITION for a model Trainyard cannot serve (see the top of this file).
  StatusOr<nlohmann::json> ServingOf(const nlohmann::json& model);
  Status Reconcile(const std::string& endpoint);
  // One deployment's step of the poll pass (mu_ held).
  Status ReconcileDeployment(const std::string& endpoint, const std::string& id,
                             nlohmann::json& deployment);
  void ReconcileUndeploy(const std::string& endpoint, const std::string& id,
                         const nlohmann::json& deployment);
  // The replica slots a deployment keeps and the jobs to create for `target` replicas.
  struct ReplicaPlan {
    nlohmann::json next = nlohmann::json::array();  // [{"job", "port"}]
    std::vector<size_t> fresh;                      // indexes in `next` of jobs to create
    int failures = 0;                               // replica failures while deploying
    std::string failure;                            // the latest, for the deploy's error
    Status give_up;                                 // not OK: the deploy fails with it
  };
  ReplicaPlan PlanReplicas(const std::string& endpoint, const nlohmann::json& deployment,
                           int target);
  // The last line a replica job wrote on stderr ("" when none).
  std::string LastStderrLine(const std::string& job);
  // Tells the router the deployment's replicas (their ports and routes).
  void RouteReplicas(const std::string& endpoint, const std::string& id,
                     const nlohmann::json& deployment);
  StatusOr<spec::CustomJob> ReplicaJob(const std::string& endpoint, const std::string& id,
                                       const nlohmann::json& deployment, int port) const;
  Status Publish(const std::string& endpoint, const std::string& id);
  void FailDeploy(const std::string& endpoint, const std::string& id, const Status& why);
  void FinishUndeploy(const std::string& endpoint, const std::string& id);
  int AutoscaleTarget(const std::string& group, const nlohmann::json& deployment);

  store::ResourceStore* store_;
  JobController* jobs_;
  ModelRegistry* models_;
  OperationController* operations_;
  serving_proxy::ReplicaRouter* router_;
  EndpointControllerOptions options_;
  StoredResourceController endpoints_;

  std::mutex mu_;
  std::set<std::string> active_;  // endpoints with deployments
  struct Load {
    double in_flight = 0;  // moving average per pass
    std::chrono::steady_clock::time_point low_since{};
  };
  std::map<std::string, Load> load_;  // by router group

  PeriodicThread poller_;
};

}  // namespace trainyard::controller
