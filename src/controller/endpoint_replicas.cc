// EndpointController's poll pass: the serving replicas of every deployed model (their jobs, the
// router's view of them, autoscaling), and the ends of deploys and undeploys.
#include <algorithm>
#include <cmath>

#include "controller/endpoint_controller.h"
#include "controller/endpoint_internal.h"
#include "executor/replica_env.h"
#include "replica_contract/serving_contract.h"
#include "spec/creator.h"

namespace trainyard::controller {

using nlohmann::json;
using namespace endpoint_internal;
namespace sc = serving_contract;

namespace {

// A serving replica runs until it is undeployed; Vertex has no timeout for it either.
constexpr std::chrono::hours kServingTimeout{24 * 365 * 10};
// Replica failures before a deploy gives up (each is a job that ended, its own restarts spent).
constexpr int kDeployFailures = 3;
constexpr std::chrono::seconds kScaleDownAfter{60};

std::vector<std::string> Strings(const json& j) {
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const json& s : j) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

const json& Resources(const json& deployed_model) {
  static const json kNone = json::object();
  if (deployed_model.contains("dedicatedResources")) return deployed_model["dedicatedResources"];
  if (deployed_model.contains("automaticResources")) return deployed_model["automaticResources"];
  return kNone;
}

int MinReplicas(const json& dm) { return std::max(1, Resources(dm).value("minReplicaCount", 1)); }
int MaxReplicas(const json& dm) {
  return std::max(MinReplicas(dm), Resources(dm).value("maxReplicaCount", 0));
}

// Why a deploy cannot go on when its replica's job has waited longer than `limit` for room on
// the host (the executor's queue); "" while it may still start.
std::string StuckInQueue(const spec::CustomJob& job, std::chrono::milliseconds limit) {
  if (job.state != spec::JobState::kQueued && job.state != spec::JobState::kPending) return "";
  if (!job.create_time || std::chrono::system_clock::now() - *job.create_time < limit) return "";
  std::string note;
  if (job.trainyard_info && !job.trainyard_info->state_history.empty()) {
    note = job.trainyard_info->state_history.back().detail;
  }
  return "the serving replica (job " + job.name + ") has waited " +
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit).count()) +
         " s for room on this host" + (note.empty() ? "" : " (" + note + ")") +
         "; deploy with a smaller machine type (--machine-type=n1-standard-1), or undeploy a "
         "model or stop a job first";
}

}  // namespace

StatusOr<json> EndpointController::ServingOf(const json& model) {
  const json cs = model.value("containerSpec", json::object());
  const std::string image = cs.value("imageUri", "");
  const std::string artifacts = model.value("artifactUri", "");
  const bool native_image = IsNativeRuntimeImage(image);
  json s = {{"storageUri", artifacts}};
  if (native_image) {
    if (artifacts.empty() || !options_.is_bert_classifier(artifacts)) {
      const std::string what =
          image.empty() ? "it has no containerSpec" : "its container is " + image;
      return FailedPreconditionError(
          "model " + model.value("name", "") + "@" + model.value("versionId", "") +
          " cannot be served: " + what + ", and its artifacts (" +
          (artifacts.empty() ? "no artifactUri" : artifacts) +
          ") are not a BERT classifier Trainyard serves natively (config.json, vocab.txt, "
          "model.safetensors, as `trainyard-bert train` exports). Vertex's prebuilt prediction "
          "images (TorchServe's model.mar, scikit-learn, XGBoost, TensorFlow) are not run. Upload "
          "the model with containerSpec.imageUri set to a serving container of your own (it "
          "listens on $AIP_HTTP_PORT and answers $AIP_PREDICT_ROUTE and $AIP_HEALTH_ROUTE), or "
          "train it with trainyard-bert");
    }
    s["runtime"] = "native";
    s["imageUri"] = kNativeServingImage;
    return s;
  }
  s["runtime"] = "container";
  s["imageUri"] = image;
  for (const char* k : {"command", "args", "env", "predictRoute", "healthRoute", "ports"}) {
    if (cs.contains(k)) s[k] = cs[k];
  }
  return s;
}

StatusOr<spec::CustomJob> EndpointController::ReplicaJob(const std::string& endpoint,
                                                         const std::string& id,
                                                         const json& deployment, int port) const {
  const json& s = deployment["serving"];
  const json& dm = deployment["deployedModel"];
  const json machine = Resources(dm).value("machineSpec", json::object());
  sc::ServingEnv env;
  env.http_port = port;
  env.predict_route = s.value("predictRoute", "");
  env.health_route = s.value("healthRoute", "");
  env.storage_uri = s.value("storageUri", "");
  env.endpoint_id = IdOf(endpoint);
  env.deployed_model_id = id;
  env.machine_type = machine.value("machineType", "");
  if (env.machine_type.empty()) env.machine_type = options_.default_machine_type;
  env.accelerator_type = machine.value("acceleratorType", "");
  env.project_number = options_.project_number;
  sc::EnvMap vars = sc::EncodeServingEnv(env);
  spec::ContainerSpec c;
  c.image_uri = s.value("imageUri", "");
  // The model's env first, then the serving variables: a model cannot move the port or routes
  // the server checks and forwards to.
  for (const json& e : s.value("env", json::array())) {
    if (!e.is_object()) continue;
    const std::string name = e.value("name", "");
    if (!name.empty() && !vars.contains(name)) {
      c.env.push_back({name, executor::ExpandEnvReferences(e.value("value", ""), vars)});
    }
  }
  for (const auto& [k, v] : vars) c.env.push_back({k, v});
  for (const std::string& a : Strings(s.value("command", json()))) {
    c.command.push_back(executor::ExpandEnvReferences(a, vars));
  }
  for (const std::string& a : Strings(s.value("args", json()))) {
    c.args.push_back(executor::ExpandEnvReferences(a, vars));
  }
  spec::WorkerPoolSpec pool;
  pool.container_spec = std::move(c);
  pool.machine_spec = spec::MachineSpec{env.machine_type, env.accelerator_type,
                                        machine.value("acceleratorCount", 0)};
  pool.replica_count = 1;
  spec::CustomJob job;
  job.display_name = "serving endpoint " + IdOf(endpoint) + " deployed model " + id;
  job.labels = {{kEndpointLabel, IdOf(endpoint)}, {kDeployedModelLabel, id}};
  job.job_spec.worker_pool_specs.push_back(std::move(pool));
  job.job_spec.service_account = dm.value("serviceAccount", "");
  job.job_spec.scheduling = spec::Scheduling{};
  job.job_spec.scheduling->timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(kServingTimeout);
  if (deployment.contains("creator")) {
    job.trainyard_info = spec::TrainyardInfo{};
    job.trainyard_info->creator =
        spec::CreatorOf(json{{"trainyardInfo", {{"creator", deployment["creator"]}}}});
  }
  return job;
}

void EndpointController::PollOnce() {
  std::lock_guard lock(mu_);
  const std::set<std::string> active = active_;
  for (const std::string& endpoint : active) (void)Reconcile(endpoint);
}

Status EndpointController::Reconcile(const std::string& endpoint) {
  StatusOr<store::ResourceRecord> r = endpoints_.GetRecord(endpoint);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kNotFound) active_.erase(endpoint);
    return r.status();
  }
  const json deployments = r->runtime.value("deployments", json::object());
  if (deployments.empty()) {
    active_.erase(endpoint);
    return Status::Ok();
  }
  for (const auto& [id, d] : deployments.items()) {
    json copy = d;
    (void)ReconcileDeployment(endpoint, id, copy);
  }
  return Status::Ok();
}

std::string EndpointController::LastStderrLine(const std::string& job) {
  // A replica that cannot serve says why last, on stderr (a short log: its first lines).
  StatusOr<LogPage> page = jobs_->ReadLogs(job, -1, 400);
  if (!page.ok()) return "";
  for (auto it = page->lines.rbegin(); it != page->lines.rend(); ++it) {
    if (it->is_stderr && !it->text.empty()) return it->text.substr(0, 500);
  }
  return "";
}

void EndpointController::ReconcileUndeploy(const std::string& endpoint, const std::string& id,
                                           const json& d) {
  bool ended = true;
  for (const json& rep : d.value("replicas", json::array())) {
    StatusOr<spec::CustomJob> job = jobs_->Get(rep.value("job", ""));
    if (job.ok() && !spec::IsTerminal(job->state)) {
      (void)jobs_->Cancel(job->name);
      ended = false;
    }
  }
  router_->RemoveGroup(GroupOf(endpoint, id));
  if (ended) FinishUndeploy(endpoint, id);
}

EndpointController::ReplicaPlan EndpointController::PlanReplicas(const std::string& endpoint,
                                                                 const json& d, int target) {
  const bool deploying = d.value("phase", "") == kDeploying;
  ReplicaPlan plan;
  plan.failures = d.value("failures", 0);
  for (const json& rep : d.value("replicas", json::array())) {
    const std::string job_name = rep.value("job", "");
    StatusOr<spec::CustomJob> job = jobs_->Get(job_name);
    if (static_cast<int>(plan.next.size()) >= target) {  // scaled down
      if (job.ok() && !spec::IsTerminal(job->state)) (void)jobs_->Cancel(job_name);
      continue;
    }
    if (!job.ok() && job.status().code() == StatusCode::kNotFound) {
      plan.fresh.push_back(plan.next.size());  // stored before a crash kept it from being created
      plan.next.push_back(rep);
      continue;
    }
    if (job.ok() && spec::IsTerminal(job->state)) {
      const std::string said = LastStderrLine(job_name);
      plan.failure = "replica job " + job_name + " ended " +
                     std::string(spec::JobStateName(job->state)) +
                     (job->error ? ": " + job->error->message : "") +
                     (said.empty() ? "" : "; it said: " + said) +
                     " (its log: gcloud ai custom-jobs stream-logs " + IdOf(job_name) + ")";
      if (deploying) ++plan.failures;
      continue;  // replaced below
    }
    if (deploying && job.ok()) {
      if (std::string why = StuckInQueue(*job, options_.deploy_queue_timeout); !why.empty()) {
        plan.give_up = ResourceExhaustedError(why);
        return plan;
      }
    }
    plan.next.push_back(rep);
  }
  if (deploying && plan.failures >= kDeployFailures) {
    plan.give_up = FailedPreconditionError("the model's serving replicas failed " +
                                           std::to_string(plan.failures) +
                                           " times; the last: " + plan.failure);
    return plan;
  }
  while (static_cast<int>(plan.next.size()) < target) {
    StatusOr<int> port = options_.pick_port();
    if (!port.ok()) break;  // the next pass tries again
    plan.fresh.push_back(plan.next.size());
    plan.next.push_back(
        {{"job", ParentOf(endpoint) + "/customJobs/" + jobs_->NewJobId()}, {"port", *port}});
  }
  return plan;
}

void EndpointController::RouteReplicas(const std::string& endpoint, const std::string& id,
                                       const json& d) {
  // The routes every replica is told (serving_contract.h: the model's, else the defaults).
  const json& s = d["serving"];
  sc::ServingEnv env;
  env.predict_route = s.value("predictRoute", "");
  env.health_route = s.value("healthRoute", "");
  env.endpoint_id = IdOf(endpoint);
  env.deployed_model_id = id;
  const sc::EnvMap routes = sc::EncodeServingEnv(env);
  std::vector<serving_proxy::ReplicaTarget> targets;
  for (const json& rep : d.value("replicas", json::array())) {
    targets.push_back({rep.value("job", ""), "127.0.0.1", rep.value("port", 0),
                       routes.at(sc::kAipPredictRoute), routes.at(sc::kAipHealthRoute)});
  }
  router_->SetReplicas(GroupOf(endpoint, id), std::move(targets));
}

Status EndpointController::ReconcileDeployment(const std::string& endpoint, const std::string& id,
                                               json& d) {
  const std::string phase = d.value("phase", "");
  const std::string group = GroupOf(endpoint, id);
  if (phase == kUndeploying) {
    ReconcileUndeploy(endpoint, id, d);
    return Status::Ok();
  }
  if (phase == kDeploying) {
    // A restart aborted the deploy's operation: the client was told it failed, so it is undone.
    StatusOr<json> op = operations_->Get(d.value("operation", ""));
    if (!op.ok() || op->value("done", false)) {
      FailDeploy(endpoint, id, Status(StatusCode::kAborted, "interrupted"));
      return Status::Ok();
    }
  }
  const json& dm = d["deployedModel"];
  const int target = phase == kDeployed ? AutoscaleTarget(group, d) : MinReplicas(dm);
  ReplicaPlan plan = PlanReplicas(endpoint, d, target);
  if (!plan.give_up.ok()) {
    FailDeploy(endpoint, id, plan.give_up);
    return Status::Ok();
  }
  if (plan.next != d.value("replicas", json::array()) || plan.failures != d.value("failures", 0)) {
    // Job names are stored before the jobs are created: a restart in between creates them.
    TY_RETURN_IF_ERROR(endpoints_
                           .Mutate(endpoint,
                                   [&](json&, json& runtime) {
                                     json& stored = runtime["deployments"][id];
                                     if (stored.is_null()) return NotFoundError(id);
                                     stored["replicas"] = plan.next;
                                     stored["failures"] = plan.failures;
                                     return Status::Ok();
                                   })
                           .status());
    d["replicas"] = plan.next;
  }
  for (size_t i : plan.fresh) {
    const json& rep = plan.next[i];
    StatusOr<spec::CustomJob> job = ReplicaJob(endpoint, id, d, rep.value("port", 0));
    Status created = job.status();
    if (job.ok()) {
      created = jobs_->Create(ParentOf(endpoint), *job, IdOf(rep.value("job", ""))).status();
    }
    if (!created.ok() && created.code() != StatusCode::kAlreadyExists && phase == kDeploying) {
      FailDeploy(endpoint, id, created.WithPrefix("a serving replica could not start: "));
      return Status::Ok();
    }
  }
  RouteReplicas(endpoint, id, d);
  if (phase == kDeploying && router_->Health(group).healthy >= MinReplicas(dm)) {
    return Publish(endpoint, id);
  }
  return Status::Ok();
}

int EndpointController::AutoscaleTarget(const std::string& group, const json& d) {
  const json& dm = d["deployedModel"];
  const int lo = MinReplicas(dm), hi = MaxReplicas(dm);
  const int current = static_cast<int>(d.value("replicas", json::array()).size());
  const serving_proxy::GroupHealth h = router_->Health(group);
  Load& load = load_[group];
  load.in_flight = 0.8 * load.in_flight + 0.2 * h.in_flight;
  const auto now = std::chrono::steady_clock::now();
  int target = std::clamp(current, lo, hi);
  if (lo == hi) return target;
  const double per_replica = load.in_flight / std::max(1, h.healthy);
  if (per_replica > kTargetInFlight && h.healthy >= current && target < hi) {
    load.low_since = {};
    return target + 1;
  }
  if (per_replica < kTargetInFlight / 2 && target > lo) {
    if (load.low_since == std::chrono::steady_clock::time_point{}) load.low_since = now;
    if (now - load.low_since >= kScaleDownAfter) {
      load.low_since = {};
      return target - 1;
    }
    return target;
  }
  load.low_since = {};
  return target;
}

Status EndpointController::Publish(const std::string& endpoint, const std::string& id) {
  json published;
  TY_RETURN_IF_ERROR(endpoints_
                         .Mutate(endpoint,
                                 [&](json& e, json& runtime) {
                                   json& d = runtime["deployments"][id];
                                   if (d.is_null()) return NotFoundError(id);
                                   json dm = d["deployedModel"];
                                   dm["createTime"] =
                                       FormatTimestamp(std::chrono::system_clock::now());
                                   spec::TrafficSplit requested;
                                   const json asked = d.value("requestedSplit", json::object());
                                   for (const auto& [k, p] : asked.items()) {
                                     if (p.is_number_integer()) requested[k] = p.get<int32_t>();
                                   }
                                   // The split was checked at deploy; a patch since may have
                                   // changed the models, and then the current split stands (or this
                                   // model gets all).
                                   StatusOr<spec::TrafficSplit> split = spec::TrafficAfterDeploy(
                                       SplitOf(e), requested, DeployedIds(e), id);
                                   if (!split.ok())
                                     split = spec::TrafficAfterDeploy(SplitOf(e), {}, {}, id);
                                   ReplaceDeployedModel(e, dm);
                                   SetSplit(e, *split);
                                   d["phase"] = kDeployed;
                                   d["deployedModel"] = dm;
                                   published = dm;
                                   return Status::Ok();
                                 })
                         .status());
  StatusOr<store::ResourceRecord> r = endpoints_.GetRecord(endpoint);
  if (r.ok()) {
    (void)operations_->Finish(r->runtime["deployments"][id].value("operation", ""),
                              json{{"@type", kDeployResponse}, {"deployedModel", published}});
  }
  return Status::Ok();
}

void EndpointController::FailDeploy(const std::string& endpoint, const std::string& id,
                                    const Status& why) {
  std::string op;
  if (StatusOr<store::ResourceRecord> now = endpoints_.GetRecord(endpoint); now.ok()) {
    for (const json& rep : now->runtime["deployments"][id].value("replicas", json::array())) {
      (void)jobs_->Cancel(rep.value("job", ""));
    }
  }
  StatusOr<store::ResourceRecord> r = endpoints_.Mutate(endpoint, [&](json&, json& runtime) {
    op = runtime["deployments"][id].value("operation", "");
    runtime["deployments"].erase(id);
    return Status::Ok();
  });
  router_->RemoveGroup(GroupOf(endpoint, id));
  load_.erase(GroupOf(endpoint, id));
  if (r.ok() && !op.empty()) (void)operations_->Finish(op, why);
}

void EndpointController::FinishUndeploy(const std::string& endpoint, const std::string& id) {
  std::string op;
  StatusOr<store::ResourceRecord> r = endpoints_.Mutate(endpoint, [&](json&, json& runtime) {
    op = runtime["deployments"][id].value("operation", "");
    runtime["deployments"].erase(id);
    return Status::Ok();
  });
  load_.erase(GroupOf(endpoint, id));
  if (r.ok() && !op.empty()) {
    (void)operations_->Finish(op, json{{"@type", kUndeployResponse}});
  }
}

}  // namespace trainyard::controller
