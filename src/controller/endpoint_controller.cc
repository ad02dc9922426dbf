// EndpointController's requests: endpoints' create, patch and delete, deploy, undeploy, mutate
// and routing. The poll pass that runs deployments is endpoint_replicas.cc.
#include "controller/endpoint_controller.h"

#include <random>

#include "common/bucket_path.h"
#include "common/time.h"
#include "controller/endpoint_internal.h"
#include "protojson/parse.h"
#include "protojson/reader.h"
#include "spec/custom_job_validation.h"
#include "spec/endpoint.h"
#include "spec/resource_name.h"

namespace trainyard::controller {

using nlohmann::json;
using namespace endpoint_internal;

namespace {

ResourceType EndpointType() {
  ResourceType t;
  t.kind = std::string(spec::kEndpoints);
  t.noun = "Endpoint";
  t.decode = [](const std::string& body) -> StatusOr<json> {
    TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
    TY_ASSIGN_OR_RETURN(json e, spec::DecodeEndpoint(j));
    if (e.contains("trafficSplit")) {
      return InvalidFieldError("trafficSplit",
                               "no model is deployed on a new endpoint; deploy one "
                               "(:deployModel), then set the split");
    }
    return e;
  };
  t.patchable = {"displayName", "description", "labels", "trafficSplit"};
  t.required = {"displayName"};
  t.check_patched = [](const json& e) -> Status {
    json input = json::object();
    for (const char* k : {"displayName", "description", "labels", "trafficSplit"}) {
      if (e.contains(k) && !e[k].is_null()) input[k] = e[k];
    }
    TY_ASSIGN_OR_RETURN(json decoded, spec::DecodeEndpoint(input));
    return spec::CheckTrafficSplit(SplitOf(decoded), DeployedIds(e), "trafficSplit");
  };
  return t;
}

}  // namespace

EndpointController::EndpointController(store::ResourceStore* store, JobController* jobs,
                                       ModelRegistry* models, OperationController* operations,
                                       serving_proxy::ReplicaRouter* router,
                                       EndpointControllerOptions options)
    : store_(store),
      jobs_(jobs),
      models_(models),
      operations_(operations),
      router_(router),
      options_(std::move(options)),
      endpoints_(store, EndpointType(), options_.clock) {
  if (!options_.is_bert_classifier) options_.is_bert_classifier = IsBertClassifierArtifact;
  if (!options_.pick_port) options_.pick_port = PickLocalPort;
}

EndpointController::~EndpointController() { Stop(); }

Status EndpointController::Start() {
  TY_ASSIGN_OR_RETURN(std::vector<store::ResourceRecord> all,
                      store_->ListAllResources(std::string(spec::kEndpoints)));
  {
    std::lock_guard lock(mu_);
    for (const store::ResourceRecord& r : all) {
      if (!r.runtime.value("deployments", json::object()).empty()) active_.insert(r.name);
    }
  }
  if (options_.poll_interval.count() > 0) {
    poller_.Start(options_.poll_interval, [this] { PollOnce(); });
  }
  return Status::Ok();
}

void EndpointController::Stop() { poller_.Stop(); }

StatusOr<json> EndpointController::Create(const std::string& parent, const std::string& body,
                                          const std::optional<spec::Creator>& creator) {
  TY_ASSIGN_OR_RETURN(json e, endpoints_.Create(parent, body, "", creator));
  return Published(std::move(e));
}

StatusOr<json> EndpointController::Patch(const std::string& name, const json& patch,
                                         const std::vector<std::string>& update_mask) {
  std::lock_guard lock(mu_);
  TY_ASSIGN_OR_RETURN(json e, endpoints_.Patch(name, patch, update_mask));
  return Published(std::move(e));
}

Status EndpointController::Delete(const std::string& name) {
  std::lock_guard lock(mu_);
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, endpoints_.GetRecord(name));
  const json deployments = r.runtime.value("deployments", json::object());
  if (!deployments.empty()) {
    std::string ids;
    for (const auto& [id, d] : deployments.items()) ids += (ids.empty() ? "" : ", ") + id;
    return FailedPreconditionError(
        "endpoint " + name + " has deployed or being-deployed models (" + ids +
        "); undeploy them first (gcloud ai endpoints undeploy-model, Endpoint.undeploy_all())");
  }
  return endpoints_.Delete(name);
}

StatusOr<json> EndpointController::ResolveModel(const std::string& endpoint,
                                                const std::string& model, std::string* version) {
  std::string name = model;
  if (size_t at = name.find('@'); at != std::string::npos) {
    *version = name.substr(at + 1);
    name.resize(at);
  }
  const std::string parent = ParentOf(endpoint);
  if (name.find('/') == std::string::npos) name = parent + "/models/" + name;
  if (!name.starts_with(parent + "/models/")) {
    return InvalidFieldError("deployedModel.model", "'" + model + "' is not a model of " + parent +
                                                        "; name one as " + parent +
                                                        "/models/MODEL_ID[@VERSION]");
  }
  StatusOr<json> m = models_->Get(name, *version);
  if (!m.ok() && m.status().code() == StatusCode::kNotFound) {
    return NotFoundError("deployedModel.model: " + m.status().message());
  }
  return m;
}

StatusOr<json> EndpointController::DeployModel(const std::string& endpoint, const std::string& body,
                                               const std::optional<spec::Creator>& creator) {
  TY_ASSIGN_OR_RETURN(spec::DeployModelRequest req, spec::ParseDeployModelRequest(body));
  if (!options_.no_serving_reason.empty()) {
    return FailedPreconditionError("models cannot be deployed here: " + options_.no_serving_reason);
  }
  std::string version;
  TY_ASSIGN_OR_RETURN(json model, ResolveModel(endpoint, req.deployed_model.model, &version));
  std::lock_guard lock(mu_);
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, endpoints_.GetRecord(endpoint));
  json deployments = r.runtime.value("deployments", json::object());
  std::string id = req.deployed_model.id;
  if (id.empty()) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    id = std::to_string(1000000000 + rng() % 8999999999ULL);
  }
  if (deployments.contains(id)) {
    return AlreadyExistsError("deployedModel.id: " + id + " is already deployed on " + endpoint +
                              "; leave id out to get a new one");
  }
  std::set<std::string> ids = DeployedIds(r.body);
  TY_RETURN_IF_ERROR(
      spec::TrafficAfterDeploy(SplitOf(r.body), req.traffic_split, ids, id).status());
  TY_ASSIGN_OR_RETURN(json serving, ServingOf(model));
  json dm = spec::DeployedModelJson(req.deployed_model);
  dm["id"] = id;
  dm["model"] = model.value("name", "");
  dm["modelVersionId"] = model.value("versionId", "");
  if (dm.value("displayName", "").empty()) dm["displayName"] = model.value("displayName", "");
  json deployment = {{"phase", kDeploying},
                     {"deployedModel", dm},
                     {"modelDisplayName", model.value("displayName", "")},
                     {"requestedSplit", SplitJson(req.traffic_split)},
                     {"serving", serving},
                     {"replicas", json::array()},
                     {"failures", 0}};
  if (creator) deployment["creator"] = spec::CreatorToJson(*creator);
  // What a replica's job would be is checked now, so that a deploy the executor can never run
  // is refused by the request instead of failing later.
  TY_ASSIGN_OR_RETURN(spec::CustomJob probe, ReplicaJob(endpoint, id, deployment, 8080));
  TY_RETURN_IF_ERROR(jobs_->Validate(ParentOf(endpoint), probe).WithPrefix("deployedModel: "));
  OperationStart start{endpoint, kDeployMetadata, json{{"genericMetadata", json::object()}}};
  TY_ASSIGN_OR_RETURN(json op, operations_->Begin(start));
  deployment["operation"] = op.value("name", "");
  TY_RETURN_IF_ERROR(endpoints_
                         .Mutate(endpoint,
                                 [&](json&, json& runtime) {
                                   runtime["deployments"][id] = deployment;
                                   return Status::Ok();
                                 })
                         .status());
  active_.insert(endpoint);
  return op;
}

StatusOr<json> EndpointController::UndeployModel(const std::string& endpoint,
                                                 const std::string& body) {
  TY_ASSIGN_OR_RETURN(spec::UndeployModelRequest req, spec::ParseUndeployModelRequest(body));
  std::lock_guard lock(mu_);
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, endpoints_.GetRecord(endpoint));
  const json& deployment = r.runtime["deployments"][req.deployed_model_id];
  if (deployment.is_null() || deployment.value("phase", "") != kDeployed) {
    return NotFoundError(
        "deployedModelId: " + req.deployed_model_id + " is not a model deployed on " + endpoint +
        (deployment.is_null() ? "" : " (it is " + deployment.value("phase", "") + ")"));
  }
  TY_ASSIGN_OR_RETURN(spec::TrafficSplit split,
                      spec::TrafficAfterUndeploy(SplitOf(r.body), req.traffic_split,
                                                 DeployedIds(r.body), req.deployed_model_id));
  OperationStart start{endpoint, kUndeployMetadata, json{{"genericMetadata", json::object()}}};
  TY_ASSIGN_OR_RETURN(json op, operations_->Begin(start));
  TY_RETURN_IF_ERROR(endpoints_
                         .Mutate(endpoint,
                                 [&](json& e, json& runtime) {
                                   json& d = runtime["deployments"][req.deployed_model_id];
                                   d["phase"] = kUndeploying;
                                   d["operation"] = op.value("name", "");
                                   RemoveDeployedModel(e, req.deployed_model_id);
                                   SetSplit(e, split);
                                   return Status::Ok();
                                 })
                         .status());
  active_.insert(endpoint);
  return op;
}

StatusOr<json> EndpointController::MutateDeployedModel(const std::string& endpoint,
                                                       const std::string& body) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
  TY_ASSIGN_OR_RETURN(
      protojson::ObjectReader f,
      protojson::ObjectReader::Open(j, "", {"endpoint", "deployedModel", "updateMask"}, {},
                                    "mutateDeployedModelRequest"));
  TY_RETURN_IF_ERROR(f.Require("deployedModel", "{\"deployedModel\": {\"id\": \"...\", ...}}"));
  TY_RETURN_IF_ERROR(f.Require("updateMask", "e.g. \"dedicatedResources.minReplicaCount\""));
  std::string mask;
  TY_RETURN_IF_ERROR(f.String("updateMask", &mask));
  const json& given = *f.Get("deployedModel");
  const std::string id = given.is_object() ? given.value("id", "") : "";
  if (id.empty()) return InvalidFieldError("deployedModel.id", "required: the model to change");
  std::lock_guard lock(mu_);
  auto mutate = [&](json& e, json& runtime) -> Status {
    json& d = runtime["deployments"][id];
    if (d.is_null() || d.value("phase", "") != kDeployed) {
      return NotFoundError("deployedModel.id: " + id + " is not deployed on " + endpoint);
    }
    TY_ASSIGN_OR_RETURN(json changed, ApplyMutation(d["deployedModel"], given, mask));
    d["deployedModel"] = changed;
    ReplaceDeployedModel(e, changed);
    return Status::Ok();
  };
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, endpoints_.Mutate(endpoint, mutate));
  OperationStart start{endpoint, kMutateMetadata, json{{"genericMetadata", json::object()}}};
  return operations_->RunNow(start, [&]() -> StatusOr<json> {
    return json{{"@type", kMutateResponse},
                {"deployedModel", r.runtime["deployments"][id]["deployedModel"]}};
  });
}

Status EndpointController::CheckNotDeployed(const std::string& model, const std::string& version) {
  TY_ASSIGN_OR_RETURN(std::vector<store::ResourceRecord> all,
                      store_->ListAllResources(std::string(spec::kEndpoints)));
  for (const store::ResourceRecord& r : all) {
    const json deployments = r.runtime.value("deployments", json::object());
    for (const auto& [id, d] : deployments.items()) {
      const json& dm = d["deployedModel"];
      if (dm.value("model", "") != model) continue;
      if (!version.empty() && dm.value("modelVersionId", "") != version) continue;
      return FailedPreconditionError("model " + model + (version.empty() ? "" : "@" + version) +
                                     " is deployed to " + r.name + " (deployed model " + id +
                                     "); undeploy it first (gcloud ai endpoints "
                                     "undeploy-model " +
                                     IdOf(r.name) + " --deployed-model-id=" + id + ")");
    }
  }
  return Status::Ok();
}

StatusOr<EndpointController::Route> EndpointController::RouteFor(
    const std::string& endpoint, const std::string& deployed_model_id) {
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, endpoints_.GetRecord(endpoint));
  std::string id = deployed_model_id;
  if (id.empty()) {
    id = PickByTraffic(SplitOf(r.body));
    if (id.empty()) {
      return FailedPreconditionError(
          "endpoint " + endpoint +
          " takes no traffic: deploy a model (gcloud ai endpoints deploy-model) or give one "
          "traffic (gcloud ai endpoints update --traffic-split)");
    }
  }
  const json& d = r.runtime["deployments"][id];
  if (d.is_null() || d.value("phase", "") != kDeployed) {
    return NotFoundError("deployed model " + id + " is not deployed on " + endpoint);
  }
  return Route{GroupOf(endpoint, id), d["deployedModel"], d.value("modelDisplayName", "")};
}

}  // namespace trainyard::controller
