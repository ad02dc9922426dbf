#include "spec/custom_job_json.h"

#include <cmath>
#include <limits>

#include "common/json_parse.h"
#include "spec/time_util.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;

std::string Join(const std::string& path, std::string_view field) {
  return path.empty() ? std::string(field) : path + "." + std::string(field);
}
std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string SnakeToCamel(std::string_view s) {
  std::string out;
  bool upper = false;
  for (char c : s) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

std::string Brief(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

Status BadValue(const std::string& path, std::string_view type, const json& v) {
  return InvalidArgumentError("Invalid value at '" + path + "' (" + std::string(type) + "), " +
                              Brief(v));
}

// The fields of one JSON object, keyed by lowerCamelCase name, after checking that every key is
// known. Null values count as absent.
class Fields {
 public:
  static StatusOr<Fields> Of(const json& j, const std::string& path,
                             std::initializer_list<std::string_view> known,
                             std::initializer_list<std::string_view> ignored = {}) {
    if (!j.is_object()) {
      return InvalidArgumentError("Invalid value at '" + (path.empty() ? "customJob" : path) +
                                  "': expected a JSON object, got " + Brief(j));
    }
    Fields f;
    f.path_ = path;
    for (const auto& [key, value] : j.items()) {
      std::string camel = SnakeToCamel(key);
      bool is_known = false;
      for (auto k : known) is_known |= (k == camel);
      bool is_ignored = false;
      for (auto k : ignored) is_ignored |= (k == camel);
      if (!is_known && !is_ignored) {
        return InvalidArgumentError("Invalid JSON payload received. Unknown name \"" + key +
                                    "\" at '" + (path.empty() ? "customJob" : path) +
                                    "': Cannot find field.");
      }
      if (f.values_.count(camel)) {
        return InvalidArgumentError("Invalid JSON payload received. Field '" + Join(path, camel) +
                                    "' is given twice (as \"" + camel +
                                    "\" and its snake_case form).");
      }
      if (is_known && !value.is_null()) f.values_[camel] = &value;
      if (is_ignored) f.values_[camel] = nullptr;
    }
    return f;
  }

  const json* Get(std::string_view name) const {
    auto it = values_.find(std::string(name));
    return it == values_.end() ? nullptr : it->second;
  }
  std::string PathOf(std::string_view name) const { return Join(path_, name); }

  Status String(std::string_view name, std::string* out) const {
    const json* v = Get(name);
    if (!v) return Status::Ok();
    if (!v->is_string()) return BadValue(PathOf(name), "TYPE_STRING", *v);
    *out = v->get<std::string>();
    return Status::Ok();
  }
  Status Bool(std::string_view name, bool* out) const {
    const json* v = Get(name);
    if (!v) return Status::Ok();
    if (!v->is_boolean()) return BadValue(PathOf(name), "TYPE_BOOL", *v);
    *out = v->get<bool>();
    return Status::Ok();
  }
  // int64 and int32 accept a JSON number with an integral value or a decimal string.
  Status Int(std::string_view name, int64_t min, int64_t max, std::string_view type,
             int64_t* out) const {
    const json* v = Get(name);
    if (!v) return Status::Ok();
    int64_t value = 0;
    if (v->is_number_integer()) {
      if (v->is_number_unsigned() &&
          v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return BadValue(PathOf(name), type, *v);
      }
      value = v->get<int64_t>();
    } else if (v->is_number_float()) {
      double d = v->get<double>();
      if (std::floor(d) != d || std::fabs(d) > 9e15) return BadValue(PathOf(name), type, *v);
      value = static_cast<int64_t>(d);
    } else if (v->is_string()) {
      const std::string& s = v->get_ref<const std::string&>();
      size_t used = 0;
      try {
        value = std::stoll(s, &used);
      } catch (...) {
        return BadValue(PathOf(name), type, *v);
      }
      if (used != s.size()) return BadValue(PathOf(name), type, *v);
    } else {
      return BadValue(PathOf(name), type, *v);
    }
    if (value < min || value > max) return BadValue(PathOf(name), type, *v);
    *out = value;
    return Status::Ok();
  }
  Status Duration(std::string_view name, std::optional<std::chrono::milliseconds>* out) const {
    const json* v = Get(name);
    if (!v) return Status::Ok();
    if (!v->is_string()) return BadValue(PathOf(name), "google.protobuf.Duration", *v);
    auto d = ParseDuration(v->get<std::string>());
    if (!d.ok()) {
      return InvalidArgumentError("Invalid value at '" + PathOf(name) +
                                  "' (google.protobuf.Duration): " + d.status().message());
    }
    *out = *d;
    return Status::Ok();
  }
  Status Time(std::string_view name, std::optional<Timestamp>* out) const {
    const json* v = Get(name);
    if (!v) return Status::Ok();
    if (!v->is_string()) return BadValue(PathOf(name), "google.protobuf.Timestamp", *v);
    auto t = ParseTimestamp(v->get<std::string>());
    if (!t.ok()) {
      return InvalidArgumentError("Invalid value at '" + PathOf(name) +
                                  "' (google.protobuf.Timestamp): " + t.status().message());
    }
    *out = *t;
    return Status::Ok();
  }
  Status Strings(std::string_view name, std::vector<std::string>* out) const {
    const json* v = Get(name);
    if (!v) return Status::Ok();
    if (!v->is_array()) return BadValue(PathOf(name), "TYPE_STRING, repeated", *v);
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) return BadValue(Index(PathOf(name), i), "TYPE_STRING", (*v)[i]);
      out->push_back((*v)[i].get<std::string>());
    }
    return Status::Ok();
  }
  Status StringMap(std::string_view name, std::map<std::string, std::string>* out) const {
    const json* v = Get(name);
    if (!v) return Status::Ok();
    if (!v->is_object()) return BadValue(PathOf(name), "map<string, string>", *v);
    for (const auto& [k, val] : v->items()) {
      if (!val.is_string()) return BadValue(PathOf(name) + "." + k, "TYPE_STRING", val);
      (*out)[k] = val.get<std::string>();
    }
    return Status::Ok();
  }

 private:
  std::string path_;
  std::map<std::string, const json*> values_;
};

Status DecodeEnv(const Fields& f, std::vector<EnvVar>* out) {
  const json* v = f.Get("env");
  if (!v) return Status::Ok();
  if (!v->is_array()) return BadValue(f.PathOf("env"), "google.cloud.aiplatform.v1.EnvVar", *v);
  for (size_t i = 0; i < v->size(); ++i) {
    TY_ASSIGN_OR_RETURN(Fields ef,
                        Fields::Of((*v)[i], Index(f.PathOf("env"), i), {"name", "value"}));
    EnvVar e;
    TY_RETURN_IF_ERROR(ef.String("name", &e.name));
    TY_RETURN_IF_ERROR(ef.String("value", &e.value));
    out->push_back(std::move(e));
  }
  return Status::Ok();
}

StatusOr<WorkerPoolSpec> DecodePool(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Of(j, path,
                           {"containerSpec", "pythonPackageSpec", "machineSpec", "replicaCount",
                            "diskSpec", "nfsMounts", "lustreMounts"}));
  WorkerPoolSpec pool;
  if (const json* c = f.Get("containerSpec")) {
    TY_ASSIGN_OR_RETURN(Fields cf, Fields::Of(*c, f.PathOf("containerSpec"),
                                              {"imageUri", "command", "args", "env"}));
    ContainerSpec spec;
    TY_RETURN_IF_ERROR(cf.String("imageUri", &spec.image_uri));
    TY_RETURN_IF_ERROR(cf.Strings("command", &spec.command));
    TY_RETURN_IF_ERROR(cf.Strings("args", &spec.args));
    TY_RETURN_IF_ERROR(DecodeEnv(cf, &spec.env));
    pool.container_spec = std::move(spec);
  }
  if (const json* p = f.Get("pythonPackageSpec")) {
    TY_ASSIGN_OR_RETURN(
        Fields pf, Fields::Of(*p, f.PathOf("pythonPackageSpec"),
                              {"executorImageUri", "packageUris", "pythonModule", "args", "env"}));
    PythonPackageSpec spec;
    TY_RETURN_IF_ERROR(pf.String("executorImageUri", &spec.executor_image_uri));
    TY_RETURN_IF_ERROR(pf.Strings("packageUris", &spec.package_uris));
    TY_RETURN_IF_ERROR(pf.String("pythonModule", &spec.python_module));
    TY_RETURN_IF_ERROR(pf.Strings("args", &spec.args));
    TY_RETURN_IF_ERROR(DecodeEnv(pf, &spec.env));
    pool.python_package_spec = std::move(spec);
  }
  if (const json* m = f.Get("machineSpec")) {
    TY_ASSIGN_OR_RETURN(Fields mf,
                        Fields::Of(*m, f.PathOf("machineSpec"),
                                   {"machineType", "acceleratorType", "acceleratorCount",
                                    "gpuPartitionSize", "tpuTopology", "reservationAffinity"}));
    for (std::string_view unsupported :
         {"gpuPartitionSize", "tpuTopology", "reservationAffinity"}) {
      if (mf.Get(unsupported)) {
        return InvalidArgumentError("'" + mf.PathOf(unsupported) +
                                    "' is not supported by Trainyard executors; remove it");
      }
    }
    MachineSpec spec;
    TY_RETURN_IF_ERROR(mf.String("machineType", &spec.machine_type));
    TY_RETURN_IF_ERROR(mf.String("acceleratorType", &spec.accelerator_type));
    if (spec.accelerator_type == "ACCELERATOR_TYPE_UNSPECIFIED") spec.accelerator_type.clear();
    int64_t count = 0;
    TY_RETURN_IF_ERROR(mf.Int("acceleratorCount", std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max(), "TYPE_INT32", &count));
    spec.accelerator_count = static_cast<int32_t>(count);
    pool.machine_spec = std::move(spec);
  }
  TY_RETURN_IF_ERROR(f.Int("replicaCount", std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max(), "TYPE_INT64", &pool.replica_count));
  if (const json* d = f.Get("diskSpec")) {
    TY_ASSIGN_OR_RETURN(Fields df,
                        Fields::Of(*d, f.PathOf("diskSpec"), {"bootDiskType", "bootDiskSizeGb"}));
    DiskSpec spec;
    TY_RETURN_IF_ERROR(df.String("bootDiskType", &spec.boot_disk_type));
    int64_t size = 0;
    TY_RETURN_IF_ERROR(df.Int("bootDiskSizeGb", std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max(), "TYPE_INT32", &size));
    spec.boot_disk_size_gb = static_cast<int32_t>(size);
    pool.disk_spec = spec;
  }
  for (std::string_view unsupported : {"nfsMounts", "lustreMounts"}) {
    if (const json* v = f.Get(unsupported); v && !(v->is_array() && v->empty())) {
      return InvalidArgumentError("'" + f.PathOf(unsupported) +
                                  "' is not supported by Trainyard executors; use a host path "
                                  "or gs:// URI in your arguments instead");
    }
  }
  return pool;
}

json EnvToJson(const std::vector<EnvVar>& env) {
  json out = json::array();
  for (const auto& e : env) out.push_back({{"name", e.name}, {"value", e.value}});
  return out;
}

json PoolToJson(const WorkerPoolSpec& pool) {
  json j = json::object();
  if (pool.container_spec) {
    const auto& c = *pool.container_spec;
    json cj = json::object();
    if (!c.image_uri.empty()) cj["imageUri"] = c.image_uri;
    if (!c.command.empty()) cj["command"] = c.command;
    if (!c.args.empty()) cj["args"] = c.args;
    if (!c.env.empty()) cj["env"] = EnvToJson(c.env);
    j["containerSpec"] = cj;
  }
  if (pool.python_package_spec) {
    const auto& p = *pool.python_package_spec;
    json pj = json::object();
    if (!p.executor_image_uri.empty()) pj["executorImageUri"] = p.executor_image_uri;
    if (!p.package_uris.empty()) pj["packageUris"] = p.package_uris;
    if (!p.python_module.empty()) pj["pythonModule"] = p.python_module;
    if (!p.args.empty()) pj["args"] = p.args;
    if (!p.env.empty()) pj["env"] = EnvToJson(p.env);
    j["pythonPackageSpec"] = pj;
  }
  if (pool.machine_spec) {
    const auto& m = *pool.machine_spec;
    json mj = json::object();
    if (!m.machine_type.empty()) mj["machineType"] = m.machine_type;
    if (!m.accelerator_type.empty()) mj["acceleratorType"] = m.accelerator_type;
    if (m.accelerator_count != 0) mj["acceleratorCount"] = m.accelerator_count;
    j["machineSpec"] = mj;
  }
  if (pool.replica_count != 0) j["replicaCount"] = std::to_string(pool.replica_count);
  if (pool.disk_spec) {
    json dj = json::object();
    if (!pool.disk_spec->boot_disk_type.empty())
      dj["bootDiskType"] = pool.disk_spec->boot_disk_type;
    if (pool.disk_spec->boot_disk_size_gb != 0)
      dj["bootDiskSizeGb"] = pool.disk_spec->boot_disk_size_gb;
    j["diskSpec"] = dj;
  }
  return j;
}

}  // namespace

std::string CustomJob::Id() const {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

json CustomJobSpecToJson(const CustomJobSpec& spec) {
  json j = json::object();
  json pools = json::array();
  for (const auto& p : spec.worker_pool_specs) pools.push_back(PoolToJson(p));
  j["workerPoolSpecs"] = pools;
  if (spec.scheduling) {
    const auto& s = *spec.scheduling;
    json sj = json::object();
    if (s.timeout) sj["timeout"] = FormatDuration(*s.timeout);
    if (s.restart_job_on_worker_restart) sj["restartJobOnWorkerRestart"] = true;
    if (!s.strategy.empty()) sj["strategy"] = s.strategy;
    if (s.disable_retries) sj["disableRetries"] = true;
    if (s.max_wait_duration) sj["maxWaitDuration"] = FormatDuration(*s.max_wait_duration);
    j["scheduling"] = sj;
  }
  if (!spec.service_account.empty()) j["serviceAccount"] = spec.service_account;
  if (!spec.network.empty()) j["network"] = spec.network;
  if (!spec.base_output_directory.empty()) {
    j["baseOutputDirectory"] = {{"outputUriPrefix", spec.base_output_directory}};
  }
  if (!spec.tensorboard.empty()) j["tensorboard"] = spec.tensorboard;
  if (spec.enable_web_access) j["enableWebAccess"] = true;
  if (spec.enable_dashboard_access) j["enableDashboardAccess"] = true;
  if (!spec.experiment.empty()) j["experiment"] = spec.experiment;
  if (!spec.experiment_run.empty()) j["experimentRun"] = spec.experiment_run;
  if (!spec.persistent_resource_id.empty()) j["persistentResourceId"] = spec.persistent_resource_id;
  return j;
}

json CustomJobToJson(const CustomJob& job) {
  json j = json::object();
  if (!job.name.empty()) j["name"] = job.name;
  j["displayName"] = job.display_name;
  j["jobSpec"] = CustomJobSpecToJson(job.job_spec);
  if (job.state != JobState::kUnspecified) j["state"] = JobStateName(job.state);
  if (job.create_time) j["createTime"] = FormatTimestamp(*job.create_time);
  if (job.start_time) j["startTime"] = FormatTimestamp(*job.start_time);
  if (job.end_time) j["endTime"] = FormatTimestamp(*job.end_time);
  if (job.update_time) j["updateTime"] = FormatTimestamp(*job.update_time);
  if (job.error) {
    json e = json::object();
    if (job.error->code != 0) e["code"] = job.error->code;
    if (!job.error->message.empty()) e["message"] = job.error->message;
    j["error"] = e;
  }
  if (!job.labels.empty()) j["labels"] = job.labels;
  if (job.trainyard_info) {
    const auto& t = *job.trainyard_info;
    json tj = {{"hourlyCostUsd", t.hourly_cost_usd}, {"estimatedCostUsd", t.estimated_cost_usd}};
    json replicas = json::array();
    for (const auto& r : t.replicas) {
      json rj = {{"taskName", "workerpool" + std::to_string(r.pool_index) + "-" +
                                  std::to_string(r.replica_index)},
                 {"restarts", r.restarts}};
      if (r.exit_code) rj["exitCode"] = *r.exit_code;
      replicas.push_back(rj);
    }
    if (!replicas.empty()) tj["replicas"] = replicas;
    j["trainyardInfo"] = tj;
  }
  return j;
}

StatusOr<CustomJobSpec> CustomJobSpecFromJson(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Of(j, path,
                 {"workerPoolSpecs", "scheduling", "serviceAccount", "network", "reservedIpRanges",
                  "baseOutputDirectory", "tensorboard", "enableWebAccess", "enableDashboardAccess",
                  "experiment", "experimentRun", "persistentResourceId", "models",
                  "protectedArtifactLocationId", "pscInterfaceConfig"}));
  CustomJobSpec spec;
  if (const json* pools = f.Get("workerPoolSpecs")) {
    if (!pools->is_array()) {
      return BadValue(f.PathOf("workerPoolSpecs"), "google.cloud.aiplatform.v1.WorkerPoolSpec",
                      *pools);
    }
    for (size_t i = 0; i < pools->size(); ++i) {
      TY_ASSIGN_OR_RETURN(WorkerPoolSpec pool,
                          DecodePool((*pools)[i], Index(f.PathOf("workerPoolSpecs"), i)));
      spec.worker_pool_specs.push_back(std::move(pool));
    }
  }
  if (const json* s = f.Get("scheduling")) {
    TY_ASSIGN_OR_RETURN(Fields sf, Fields::Of(*s, f.PathOf("scheduling"),
                                              {"timeout", "restartJobOnWorkerRestart", "strategy",
                                               "disableRetries", "maxWaitDuration"}));
    Scheduling sched;
    TY_RETURN_IF_ERROR(sf.Duration("timeout", &sched.timeout));
    TY_RETURN_IF_ERROR(sf.Bool("restartJobOnWorkerRestart", &sched.restart_job_on_worker_restart));
    TY_RETURN_IF_ERROR(sf.String("strategy", &sched.strategy));
    TY_RETURN_IF_ERROR(sf.Bool("disableRetries", &sched.disable_retries));
    TY_RETURN_IF_ERROR(sf.Duration("maxWaitDuration", &sched.max_wait_duration));
    spec.scheduling = sched;
  }
  TY_RETURN_IF_ERROR(f.String("serviceAccount", &spec.service_account));
  TY_RETURN_IF_ERROR(f.String("network", &spec.network));
  if (const json* b = f.Get("baseOutputDirectory")) {
    TY_ASSIGN_OR_RETURN(Fields bf,
                        Fields::Of(*b, f.PathOf("baseOutputDirectory"), {"outputUriPrefix"}));
    TY_RETURN_IF_ERROR(bf.String("outputUriPrefix", &spec.base_output_directory));
  }
  TY_RETURN_IF_ERROR(f.String("tensorboard", &spec.tensorboard));
  TY_RETURN_IF_ERROR(f.Bool("enableWebAccess", &spec.enable_web_access));
  TY_RETURN_IF_ERROR(f.Bool("enableDashboardAccess", &spec.enable_dashboard_access));
  TY_RETURN_IF_ERROR(f.String("experiment", &spec.experiment));
  TY_RETURN_IF_ERROR(f.String("experimentRun", &spec.experiment_run));
  TY_RETURN_IF_ERROR(f.String("persistentResourceId", &spec.persistent_resource_id));
  for (std::string_view unsupported :
       {"reservedIpRanges", "models", "protectedArtifactLocationId", "pscInterfaceConfig"}) {
    if (const json* v = f.Get(unsupported); v && !(v->is_array() && v->empty())) {
      return InvalidArgumentError("'" + f.PathOf(unsupported) +
                                  "' is not supported by Trainyard; remove it");
    }
  }
  return spec;
}

StatusOr<CustomJob> CustomJobFromJson(const json& j, DecodeMode mode) {
  const bool stored = mode == DecodeMode::kStored;
  std::initializer_list<std::string_view> output_only = {
      "name",  "state",         "createTime",    "startTime",    "endTime",      "updateTime",
      "error", "trainyardInfo", "webAccessUris", "satisfiesPzs", "satisfiesPzi", "encryptionSpec"};
  TY_ASSIGN_OR_RETURN(
      Fields f,
      stored ? Fields::Of(j, "",
                          {"name", "state", "createTime", "startTime", "endTime", "updateTime",
                           "error", "trainyardInfo", "displayName", "jobSpec", "labels"})
             : Fields::Of(j, "", {"displayName", "jobSpec", "labels"}, output_only));
  CustomJob job;
  TY_RETURN_IF_ERROR(f.String("displayName", &job.display_name));
  TY_RETURN_IF_ERROR(f.StringMap("labels", &job.labels));
  if (const json* spec = f.Get("jobSpec")) {
    TY_ASSIGN_OR_RETURN(job.job_spec, CustomJobSpecFromJson(*spec, "jobSpec"));
  }
  if (!stored) return job;

  TY_RETURN_IF_ERROR(f.String("name", &job.name));
  std::string state;
  TY_RETURN_IF_ERROR(f.String("state", &state));
  if (!state.empty()) {
    auto parsed = ParseJobState(state);
    if (!parsed) return BadValue("state", "google.cloud.aiplatform.v1.JobState", state);
    job.state = *parsed;
  }
  TY_RETURN_IF_ERROR(f.Time("createTime", &job.create_time));
  TY_RETURN_IF_ERROR(f.Time("startTime", &job.start_time));
  TY_RETURN_IF_ERROR(f.Time("endTime", &job.end_time));
  TY_RETURN_IF_ERROR(f.Time("updateTime", &job.update_time));
  if (const json* e = f.Get("error")) {
    TY_ASSIGN_OR_RETURN(Fields ef, Fields::Of(*e, "error", {"code", "message", "details"}));
    RpcStatus status;
    int64_t code = 0;
    TY_RETURN_IF_ERROR(ef.Int("code", 0, 16, "TYPE_INT32", &code));
    status.code = static_cast<int>(code);
    TY_RETURN_IF_ERROR(ef.String("message", &status.message));
    job.error = status;
  }
  if (const json* t = f.Get("trainyardInfo")) {
    TrainyardInfo info;
    info.hourly_cost_usd = t->value("hourlyCostUsd", 0.0);
    info.estimated_cost_usd = t->value("estimatedCostUsd", 0.0);
    if (t->contains("replicas")) {
      for (const auto& r : (*t)["replicas"]) {
        ReplicaInfo ri;
        std::string task = r.value("taskName", "");
        std::sscanf(task.c_str(), "workerpool%d-%d", &ri.pool_index, &ri.replica_index);
        if (r.contains("exitCode")) ri.exit_code = r["exitCode"].get<int>();
        ri.restarts = r.value("restarts", 0);
        info.replicas.push_back(ri);
      }
    }
    job.trainyard_info = info;
  }
  return job;
}

StatusOr<CustomJob> ParseCustomJob(std::string_view text, DecodeMode mode) {
  StatusOr<json> j = ParseJson(text);
  if (!j.ok()) {
    return InvalidArgumentError("Invalid JSON payload received. " + j.status().message());
  }
  try {
    return CustomJobFromJson(*j, mode);
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("Invalid JSON payload received: ") + e.what());
  }
}

}  // namespace trainyard::spec
