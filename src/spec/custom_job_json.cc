#include "spec/custom_job_json.h"

#include "protojson/parse.h"
#include "protojson/reader.h"
#include "protojson/writer.h"
#include "replica_contract/replica_contract.h"
#include "spec/resource_name.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;
using protojson::InvalidValueError;
using Fields = protojson::ObjectReader;
using Writer = protojson::ObjectWriter;

// Scheduling durations are kept in milliseconds; finer digits are dropped.
Status ReadMillis(const Fields& f, std::string_view name,
                  std::optional<std::chrono::milliseconds>* out) {
  std::optional<Duration> d;
  TY_RETURN_IF_ERROR(f.Duration(name, &d));
  if (d) *out = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  return Status::Ok();
}

StatusOr<EnvVar> DecodeEnvVar(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"name", "value"}));
  EnvVar e;
  TY_RETURN_IF_ERROR(f.String("name", &e.name));
  TY_RETURN_IF_ERROR(f.String("value", &e.value));
  return e;
}

StatusOr<ContainerSpec> DecodeContainer(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"imageUri", "command", "args", "env"}));
  ContainerSpec spec;
  TY_RETURN_IF_ERROR(f.String("imageUri", &spec.image_uri));
  TY_RETURN_IF_ERROR(f.Strings("command", &spec.command));
  TY_RETURN_IF_ERROR(f.Strings("args", &spec.args));
  TY_RETURN_IF_ERROR(f.Repeated("env", &spec.env, DecodeEnvVar));
  return spec;
}

StatusOr<PythonPackageSpec> DecodePythonPackage(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Open(j, path, {"executorImageUri", "packageUris", "pythonModule", "args", "env"}));
  PythonPackageSpec spec;
  TY_RETURN_IF_ERROR(f.String("executorImageUri", &spec.executor_image_uri));
  TY_RETURN_IF_ERROR(f.Strings("packageUris", &spec.package_uris));
  TY_RETURN_IF_ERROR(f.String("pythonModule", &spec.python_module));
  TY_RETURN_IF_ERROR(f.Strings("args", &spec.args));
  TY_RETURN_IF_ERROR(f.Repeated("env", &spec.env, DecodeEnvVar));
  return spec;
}

StatusOr<MachineSpec> DecodeMachine(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f,
                      Fields::Open(j, path,
                                   {"machineType", "acceleratorType", "acceleratorCount",
                                    "gpuPartitionSize", "tpuTopology", "reservationAffinity"}));
  for (std::string_view unsupported : {"gpuPartitionSize", "tpuTopology", "reservationAffinity"}) {
    TY_RETURN_IF_ERROR(f.RejectIfSet(unsupported, "remove it"));
  }
  MachineSpec spec;
  TY_RETURN_IF_ERROR(f.String("machineType", &spec.machine_type));
  TY_RETURN_IF_ERROR(f.String("acceleratorType", &spec.accelerator_type));
  if (spec.accelerator_type == "ACCELERATOR_TYPE_UNSPECIFIED") spec.accelerator_type.clear();
  TY_RETURN_IF_ERROR(f.Int32("acceleratorCount", &spec.accelerator_count));
  return spec;
}

StatusOr<DiskSpec> DecodeDisk(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"bootDiskType", "bootDiskSizeGb"}));
  DiskSpec spec;
  TY_RETURN_IF_ERROR(f.String("bootDiskType", &spec.boot_disk_type));
  TY_RETURN_IF_ERROR(f.Int32("bootDiskSizeGb", &spec.boot_disk_size_gb));
  return spec;
}

StatusOr<WorkerPoolSpec> DecodePool(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Open(j, path,
                             {"containerSpec", "pythonPackageSpec", "machineSpec", "replicaCount",
                              "diskSpec", "nfsMounts", "lustreMounts"}));
  WorkerPoolSpec pool;
  TY_RETURN_IF_ERROR(f.Message("containerSpec", &pool.container_spec, DecodeContainer));
  TY_RETURN_IF_ERROR(
      f.Message("pythonPackageSpec", &pool.python_package_spec, DecodePythonPackage));
  TY_RETURN_IF_ERROR(f.Message("machineSpec", &pool.machine_spec, DecodeMachine));
  TY_RETURN_IF_ERROR(f.Int64("replicaCount", &pool.replica_count));
  TY_RETURN_IF_ERROR(f.Message("diskSpec", &pool.disk_spec, DecodeDisk));
  for (std::string_view unsupported : {"nfsMounts", "lustreMounts"}) {
    TY_RETURN_IF_ERROR(
        f.RejectIfSet(unsupported, "use a host path or gs:// URI in your arguments instead"));
  }
  return pool;
}

StatusOr<Scheduling> DecodeScheduling(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"timeout", "restartJobOnWorkerRestart", "strategy",
                                              "disableRetries", "maxWaitDuration"}));
  Scheduling sched;
  TY_RETURN_IF_ERROR(ReadMillis(f, "timeout", &sched.timeout));
  TY_RETURN_IF_ERROR(f.Bool("restartJobOnWorkerRestart", &sched.restart_job_on_worker_restart));
  TY_RETURN_IF_ERROR(f.String("strategy", &sched.strategy));
  TY_RETURN_IF_ERROR(f.Bool("disableRetries", &sched.disable_retries));
  TY_RETURN_IF_ERROR(ReadMillis(f, "maxWaitDuration", &sched.max_wait_duration));
  return sched;
}

StatusOr<RpcStatus> DecodeRpcStatus(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"code", "message", "details"}));
  RpcStatus status;
  TY_RETURN_IF_ERROR(f.Int32("code", &status.code));
  if (status.code < 0 || status.code > 16) {
    return InvalidValueError(f.PathOf("code"), "TYPE_INT32", status.code,
                             "expected a google.rpc.Code, 0..16");
  }
  TY_RETURN_IF_ERROR(f.String("message", &status.message));
  return status;
}

StatusOr<ReplicaInfo> DecodeReplicaInfo(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"taskName", "exitCode", "restarts"}));
  ReplicaInfo info;
  std::string task;
  TY_RETURN_IF_ERROR(f.String("taskName", &task));
  if (std::sscanf(task.c_str(), "workerpool%d-%d", &info.pool_index, &info.replica_index) != 2) {
    return InvalidValueError(f.PathOf("taskName"), "TYPE_STRING", task,
                             "expected workerpool<pool>-<replica>");
  }
  if (f.Has("exitCode")) {
    int32_t code = 0;
    TY_RETURN_IF_ERROR(f.Int32("exitCode", &code));
    info.exit_code = code;
  }
  TY_RETURN_IF_ERROR(f.Int32("restarts", &info.restarts));
  return info;
}

StatusOr<StateChange> DecodeStateChange(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"state", "time", "detail"}));
  StateChange change;
  std::optional<Timestamp> time;
  TY_RETURN_IF_ERROR(f.Enum("state", JobStateType(), &change.state));
  TY_RETURN_IF_ERROR(f.Timestamp("time", &time));
  TY_RETURN_IF_ERROR(f.String("detail", &change.detail));
  if (time) change.time = *time;
  return change;
}

StatusOr<TrainyardInfo> DecodeTrainyardInfo(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"hourlyCostUsd", "estimatedCostUsd", "replicas",
                                              "stateHistory", kCreatorKey}));
  TrainyardInfo info;
  TY_RETURN_IF_ERROR(f.Double("hourlyCostUsd", &info.hourly_cost_usd));
  TY_RETURN_IF_ERROR(f.Double("estimatedCostUsd", &info.estimated_cost_usd));
  TY_RETURN_IF_ERROR(f.Repeated("replicas", &info.replicas, DecodeReplicaInfo));
  TY_RETURN_IF_ERROR(f.Repeated("stateHistory", &info.state_history, DecodeStateChange));
  TY_RETURN_IF_ERROR(f.Message(kCreatorKey, &info.creator, CreatorFromJson));
  return info;
}

json EnvToJson(const std::vector<EnvVar>& env) {
  json out = json::array();
  for (const auto& e : env) out.push_back({{"name", e.name}, {"value", e.value}});
  return out;
}

json ContainerToJson(const ContainerSpec& c) {
  return Writer()
      .String("imageUri", c.image_uri)
      .Strings("command", c.command)
      .Strings("args", c.args)
      .Value("env", EnvToJson(c.env))
      .Build();
}

json PythonPackageToJson(const PythonPackageSpec& p) {
  return Writer()
      .String("executorImageUri", p.executor_image_uri)
      .Strings("packageUris", p.package_uris)
      .String("pythonModule", p.python_module)
      .Strings("args", p.args)
      .Value("env", EnvToJson(p.env))
      .Build();
}

json PoolToJson(const WorkerPoolSpec& pool) {
  Writer w;
  if (pool.container_spec) w.Value("containerSpec", ContainerToJson(*pool.container_spec));
  if (pool.python_package_spec) {
    w.Value("pythonPackageSpec", PythonPackageToJson(*pool.python_package_spec));
  }
  if (const auto& m = pool.machine_spec) {
    w.Value("machineSpec", Writer()
                               .String("machineType", m->machine_type)
                               .String("acceleratorType", m->accelerator_type)
                               .Int32("acceleratorCount", m->accelerator_count)
                               .Build());
  }
  w.Int64("replicaCount", pool.replica_count);
  if (const auto& d = pool.disk_spec) {
    w.Value("diskSpec", Writer()
                            .String("bootDiskType", d->boot_disk_type)
                            .Int32("bootDiskSizeGb", d->boot_disk_size_gb)
                            .Build());
  }
  return w.Build();
}

json TrainyardInfoToJson(const TrainyardInfo& t) {
  json replicas = json::array();
  for (const auto& r : t.replicas) {
    json rj = {{"taskName", replica_contract::TaskName(r.pool_index, r.replica_index)},
               {"restarts", r.restarts}};
    if (r.exit_code) rj["exitCode"] = *r.exit_code;
    replicas.push_back(rj);
  }
  // Costs are always written, even when 0, so clients need not special-case them.
  json tj = {{"hourlyCostUsd", t.hourly_cost_usd}, {"estimatedCostUsd", t.estimated_cost_usd}};
  if (!replicas.empty()) tj["replicas"] = replicas;
  if (!t.state_history.empty()) {
    json history = json::array();
    for (const StateChange& c : t.state_history) {
      history.push_back(Writer()
                            .Value("state", JobStateName(c.state))
                            .Timestamp("time", std::optional<Timestamp>(c.time))
                            .String("detail", c.detail)
                            .Build());
    }
    tj["stateHistory"] = std::move(history);
  }
  if (t.creator) tj[kCreatorKey] = CreatorToJson(*t.creator);
  return tj;
}

}  // namespace

std::string CustomJob::Id() const { return std::string(LastSegment(name)); }

void RecordStateChange(CustomJob& job, JobState state, Timestamp time, std::string detail) {
  if (!job.trainyard_info) job.trainyard_info = TrainyardInfo{};
  std::vector<StateChange>& history = job.trainyard_info->state_history;
  if (!history.empty() && history.back().state == state && detail.empty()) return;
  history.push_back({state, time, std::move(detail)});
  ++job.trainyard_info->steps_appended;
  if (history.size() > kMaxStateHistory) history.erase(history.begin() + 1);
}

json CustomJobSpecToJson(const CustomJobSpec& spec) {
  json pools = json::array();
  for (const auto& p : spec.worker_pool_specs) pools.push_back(PoolToJson(p));
  json j = Writer()
               .String("serviceAccount", spec.service_account)
               .String("network", spec.network)
               .String("tensorboard", spec.tensorboard)
               .Bool("enableWebAccess", spec.enable_web_access)
               .Bool("enableDashboardAccess", spec.enable_dashboard_access)
               .String("experiment", spec.experiment)
               .String("experimentRun", spec.experiment_run)
               .String("persistentResourceId", spec.persistent_resource_id)
               .String("trainyardTfConfigPrimaryRole", spec.tf_config_primary_role)
               .Build();
  j["workerPoolSpecs"] = pools;  // even when empty: clients index into it
  if (const auto& s = spec.scheduling) {
    j["scheduling"] = Writer()
                          .Duration("timeout", s->timeout)
                          .Bool("restartJobOnWorkerRestart", s->restart_job_on_worker_restart)
                          .String("strategy", s->strategy)
                          .Bool("disableRetries", s->disable_retries)
                          .Duration("maxWaitDuration", s->max_wait_duration)
                          .Build();
  }
  if (!spec.base_output_directory.empty()) {
    j["baseOutputDirectory"] = {{"outputUriPrefix", spec.base_output_directory}};
  }
  return j;
}

json CustomJobToJson(const CustomJob& job) {
  Writer w;
  w.String("name", job.name)
      .Value("displayName", job.display_name)
      .Value("jobSpec", CustomJobSpecToJson(job.job_spec));
  if (job.state != JobState::kUnspecified) w.Value("state", JobStateName(job.state));
  w.Timestamp("createTime", job.create_time)
      .Timestamp("startTime", job.start_time)
      .Timestamp("endTime", job.end_time)
      .Timestamp("updateTime", job.update_time)
      .StringMap("labels", job.labels);
  if (job.error) {
    w.Value("error",
            Writer().Int32("code", job.error->code).String("message", job.error->message).Build());
  }
  if (job.trainyard_info) w.Value("trainyardInfo", TrainyardInfoToJson(*job.trainyard_info));
  return w.Build();
}

StatusOr<CustomJobSpec> CustomJobSpecFromJson(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Open(
          j, path,
          {"workerPoolSpecs", "scheduling", "serviceAccount", "network", "reservedIpRanges",
           "baseOutputDirectory", "tensorboard", "enableWebAccess", "enableDashboardAccess",
           "experiment", "experimentRun", "persistentResourceId", "models",
           "protectedArtifactLocationId", "pscInterfaceConfig", "trainyardTfConfigPrimaryRole"},
          {}, "customJobSpec"));
  CustomJobSpec spec;
  TY_RETURN_IF_ERROR(f.Repeated("workerPoolSpecs", &spec.worker_pool_specs, DecodePool));
  TY_RETURN_IF_ERROR(f.Message("scheduling", &spec.scheduling, DecodeScheduling));
  TY_RETURN_IF_ERROR(f.String("serviceAccount", &spec.service_account));
  TY_RETURN_IF_ERROR(f.String("network", &spec.network));
  if (const json* b = f.Get("baseOutputDirectory")) {
    TY_ASSIGN_OR_RETURN(Fields bf,
                        Fields::Open(*b, f.PathOf("baseOutputDirectory"), {"outputUriPrefix"}));
    TY_RETURN_IF_ERROR(bf.String("outputUriPrefix", &spec.base_output_directory));
  }
  TY_RETURN_IF_ERROR(f.String("tensorboard", &spec.tensorboard));
  TY_RETURN_IF_ERROR(f.Bool("enableWebAccess", &spec.enable_web_access));
  TY_RETURN_IF_ERROR(f.Bool("enableDashboardAccess", &spec.enable_dashboard_access));
  TY_RETURN_IF_ERROR(f.String("experiment", &spec.experiment));
  TY_RETURN_IF_ERROR(f.String("experimentRun", &spec.experiment_run));
  TY_RETURN_IF_ERROR(f.String("persistentResourceId", &spec.persistent_resource_id));
  TY_RETURN_IF_ERROR(f.String("trainyardTfConfigPrimaryRole", &spec.tf_config_primary_role));
  for (std::string_view unsupported :
       {"reservedIpRanges", "models", "protectedArtifactLocationId", "pscInterfaceConfig"}) {
    TY_RETURN_IF_ERROR(f.RejectIfSet(unsupported, "remove it"));
  }
  return spec;
}

StatusOr<CustomJob> CustomJobFromJson(const json& j, DecodeMode mode) {
  const bool stored = mode == DecodeMode::kStored;
  TY_ASSIGN_OR_RETURN(
      Fields f,
      stored ? Fields::Open(j, "",
                            {"name", "state", "createTime", "startTime", "endTime", "updateTime",
                             "error", "trainyardInfo", "displayName", "jobSpec", "labels"},
                            {}, "customJob")
             : Fields::Open(j, "", {"displayName", "jobSpec", "labels"},
                            {"name", "state", "createTime", "startTime", "endTime", "updateTime",
                             "error", "trainyardInfo", "webAccessUris", "satisfiesPzs",
                             "satisfiesPzi", "encryptionSpec"},
                            "customJob"));
  CustomJob job;
  TY_RETURN_IF_ERROR(f.String("displayName", &job.display_name));
  TY_RETURN_IF_ERROR(f.StringMap("labels", &job.labels));
  if (const json* spec = f.Get("jobSpec")) {
    TY_ASSIGN_OR_RETURN(job.job_spec, CustomJobSpecFromJson(*spec, "jobSpec"));
  }
  if (!stored) return job;

  TY_RETURN_IF_ERROR(f.String("name", &job.name));
  TY_RETURN_IF_ERROR(f.Enum("state", JobStateType(), &job.state));
  TY_RETURN_IF_ERROR(f.Timestamp("createTime", &job.create_time));
  TY_RETURN_IF_ERROR(f.Timestamp("startTime", &job.start_time));
  TY_RETURN_IF_ERROR(f.Timestamp("endTime", &job.end_time));
  TY_RETURN_IF_ERROR(f.Timestamp("updateTime", &job.update_time));
  TY_RETURN_IF_ERROR(f.Message("error", &job.error, DecodeRpcStatus));
  TY_RETURN_IF_ERROR(f.Message("trainyardInfo", &job.trainyard_info, DecodeTrainyardInfo));
  return job;
}

StatusOr<CustomJob> ParseCustomJob(std::string_view text, DecodeMode mode) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(text));
  return CustomJobFromJson(j, mode);
}

}  // namespace trainyard::spec
