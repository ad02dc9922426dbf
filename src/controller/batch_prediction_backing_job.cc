// The backing CustomJob of a batch prediction job, per runtime (batch_prediction_controller.h).
#include "controller/backing_job.h"
#include "controller/batch_prediction_controller.h"
#include "controller/endpoint_internal.h"
#include "executor/replica_env.h"
#include "replica_contract/replica_contract.h"
#include "replica_contract/serving_contract.h"
#include "spec/batch_prediction_job.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;
namespace sc = serving_contract;

constexpr size_t kMaxBackingDisplayName = 128;

std::string BatchIdOf(const std::string& name) { return ResourceIdOf(name); }

std::vector<std::string> StringsOf(const json& v) {
  std::vector<std::string> out;
  if (!v.is_array()) return out;
  for (const json& s : v) {
    if (s.is_string()) out.push_back(s);
  }
  return out;
}

// The flags every batch-predict replica gets.
std::vector<std::string> FeederArgs(const spec::BatchPredictionSpec& s,
                                    const std::string& staging) {
  std::vector<std::string> args = {
      "--instances-format", s.instances_format,
      "--instance-config",  spec::InstanceConfigToJson(s.instance_config).dump(),
      "--output-dir",       staging + "/output",
      "--progress-dir",     staging + "/progress",
      "--batch-size",       std::to_string(s.batch_size)};
  if (!s.model_parameters.is_null())
    args.insert(args.end(), {"--parameters", s.model_parameters.dump()});
  for (const std::string& uri : s.source_uris) args.insert(args.end(), {"--input", uri});
  return args;
}

// The model's serving container as pool 1's replicas run it: its env (expanded against the
// serving variables), then the serving variables, which the model cannot move.
spec::ContainerSpec ModelContainer(const json& serving, const sc::EnvMap& vars) {
  spec::ContainerSpec c;
  c.image_uri = serving.value("imageUri", "");
  for (const json& e : serving.value("env", json::array())) {
    if (!e.is_object()) continue;
    const std::string name = e.value("name", "");
    if (!name.empty() && !vars.contains(name)) {
      c.env.push_back({name, executor::ExpandEnvReferences(e.value("value", ""), vars)});
    }
  }
  for (const auto& [k, v] : vars) c.env.push_back({k, v});
  for (const std::string& a : StringsOf(serving.value("command", json()))) {
    c.command.push_back(executor::ExpandEnvReferences(a, vars));
  }
  for (const std::string& a : StringsOf(serving.value("args", json()))) {
    c.args.push_back(executor::ExpandEnvReferences(a, vars));
  }
  return c;
}

}  // namespace

StatusOr<json> BatchPredictionController::ServingOf(const json& model) const {
  const json cs = model.value("containerSpec", json::object());
  const std::string image = cs.value("imageUri", "");
  const std::string artifacts = model.value("artifactUri", "");
  json s = {{"storageUri", artifacts}};
  if (!endpoint_internal::IsNativeRuntimeImage(image)) {
    s["runtime"] = "container";
    s["imageUri"] = image;
    for (const char* k : {"command", "args", "env", "predictRoute", "healthRoute"}) {
      if (cs.contains(k)) s[k] = cs[k];
    }
    return s;
  }
  if (artifacts.empty() || !options_.is_bert_classifier(artifacts)) {
    const std::string which = model.value("name", "") + "@" + model.value("versionId", "");
    return FailedPreconditionError(
        "model: " + which + "'s artifacts (" + (artifacts.empty() ? "no artifactUri" : artifacts) +
        ") are not a BERT classifier Trainyard runs natively (config.json, vocab.txt, "
        "model.safetensors, as `trainyard-bert train` exports), and its container is " +
        (image.empty() ? "none" : image) +
        "; upload the model with containerSpec.imageUri set to a serving container of your own "
        "(it listens on $AIP_HTTP_PORT and answers $AIP_PREDICT_ROUTE and $AIP_HEALTH_ROUTE)");
  }
  s["runtime"] = "native";
  return s;
}

StatusOr<spec::CustomJob> BatchPredictionController::JobFor(const std::string& name,
                                                            const json& job,
                                                            const json& serving) const {
  TY_ASSIGN_OR_RETURN(spec::BatchPredictionSpec s, spec::BatchPredictionSpecOf(job));
  const std::string staging = StagingDir(name);
  spec::MachineSpec machine = s.machine;
  if (machine.machine_type.empty()) machine.machine_type = options_.default_machine_type;
  spec::WorkerPoolSpec feeder;
  feeder.container_spec = spec::ContainerSpec{};
  feeder.container_spec->image_uri = kBatchPredictImage;
  feeder.container_spec->args = FeederArgs(s, staging);
  feeder.replica_count = 1;
  spec::CustomJob out;
  if (serving.value("runtime", "") == "container") {
    sc::ServingEnv env;
    env.predict_route = serving.value("predictRoute", "");
    env.health_route = serving.value("healthRoute", "");
    env.storage_uri = serving.value("storageUri", "");
    env.endpoint_id = "batch-prediction-" + BatchIdOf(name);
    env.deployed_model_id = BatchIdOf(name);
    env.machine_type = machine.machine_type;
    env.accelerator_type = machine.accelerator_type;
    sc::EnvMap vars = sc::EncodeServingEnv(env);
    // Each model replica listens on the port the executor reserved for it (its CLUSTER_SPEC
    // address, where the feeder sends the instances).
    vars[sc::kAipHttpPort] = std::string("$(") + replica_contract::kTrainyardReplicaPort + ")";
    feeder.container_spec->args.insert(
        feeder.container_spec->args.end(),
        {"--model-pool", "1", "--predict-route", vars[sc::kAipPredictRoute], "--health-route",
         vars[sc::kAipHealthRoute]});
    feeder.machine_spec = spec::MachineSpec{options_.default_machine_type, "", 0};
    spec::WorkerPoolSpec model;
    model.container_spec = ModelContainer(serving, vars);
    model.machine_spec = machine;
    model.replica_count = s.starting_replicas;
    out.job_spec.worker_pool_specs = {std::move(feeder), std::move(model)};
  } else {
    feeder.container_spec->args.insert(feeder.container_spec->args.begin(),
                                       {"--model-dir", serving.value("storageUri", "")});
    feeder.machine_spec = machine;
    // Vertex's primary pool has one replica: the others are pool 1's (shards 1..N-1).
    out.job_spec.worker_pool_specs.push_back(feeder);
    if (s.starting_replicas > 1) {
      feeder.replica_count = s.starting_replicas - 1;
      out.job_spec.worker_pool_specs.push_back(std::move(feeder));
    }
  }
  out.display_name = job.value("displayName", "") + "-batch-prediction";
  if (out.display_name.size() > kMaxBackingDisplayName) {
    out.display_name.resize(kMaxBackingDisplayName);
  }
  out.labels = job.value("labels", std::map<std::string, std::string>());
  out.labels[kBatchPredictionLabel] = BatchIdOf(name);
  out.job_spec.base_output_directory = staging;
  return out;
}

}  // namespace trainyard::controller
