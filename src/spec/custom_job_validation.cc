#include "spec/custom_job_validation.h"

#include "common/bucket_path.h"
#include "spec/job_priority.h"

namespace trainyard::spec {
size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

namespace {

bool IsCIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

bool IsLabelText(std::string_view s) {
  for (unsigned char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c >= 0x80)) {
      return false;
    }
  }
  return true;
}

Status ValidateEnv(const std::vector<EnvVar>& env, const std::string& path) {
  if (env.size() > kMaxEnvVars) {
    return InvalidFieldError(path, "at most " + std::to_string(kMaxEnvVars) +
                                       " variables are allowed, got " + std::to_string(env.size()));
  }
  for (size_t i = 0; i < env.size(); ++i) {
    if (!IsCIdentifier(env[i].name)) {
      return InvalidFieldError(
          path + "[" + std::to_string(i) + "].name",
          "'" + env[i].name +
              "' is not a valid variable name (letters, digits and '_', not starting "
              "with a digit)");
    }
  }
  return Status::Ok();
}

Status ValidatePool(const WorkerPoolSpec& pool, size_t index, const std::string& path) {
  if (pool.IsEmpty()) {
    if (index == 0) {
      return InvalidFieldError(
          path,
          "the primary pool (workerPoolSpecs[0]) must not be empty; give it a "
          "machineSpec, replicaCount 1 and a containerSpec or pythonPackageSpec");
    }
    return Status::Ok();
  }
  TY_RETURN_IF_ERROR(
      ResolveMachineSpec(pool.machine_spec.value_or(MachineSpec{}), path + ".machineSpec")
          .status());
  if (index == 0 && pool.replica_count != 1) {
    return InvalidFieldError(
        path + ".replicaCount",
        "the primary pool (workerPoolSpecs[0]) must have exactly 1 replica, got " +
            std::to_string(pool.replica_count) + "; put more replicas in workerPoolSpecs[1]");
  }
  if (pool.replica_count < 1 || pool.replica_count > kMaxReplicasPerPool) {
    return InvalidFieldError(path + ".replicaCount",
                             "must be between 1 and " + std::to_string(kMaxReplicasPerPool) +
                                 ", got " + std::to_string(pool.replica_count));
  }
  if (pool.container_spec && pool.python_package_spec) {
    return InvalidFieldError(
        path, "containerSpec and pythonPackageSpec are mutually exclusive; keep one");
  }
  if (!pool.container_spec && !pool.python_package_spec) {
    return InvalidFieldError(path, "one of containerSpec or pythonPackageSpec is required");
  }
  if (pool.container_spec) {
    const ContainerSpec& c = *pool.container_spec;
    if (c.image_uri.empty()) {
      return InvalidFieldError(
          path + ".containerSpec.imageUri",
          "required; an image from the image catalog, or \"local\" with a command");
    }
    TY_RETURN_IF_ERROR(ValidateEnv(c.env, path + ".containerSpec.env"));
  }
  if (pool.python_package_spec) {
    const PythonPackageSpec& p = *pool.python_package_spec;
    const std::string pp = path + ".pythonPackageSpec";
    if (p.executor_image_uri.empty())
      return InvalidFieldError(pp + ".executorImageUri", "required");
    if (p.package_uris.empty()) {
      return InvalidFieldError(pp + ".packageUris", "at least one package URI is required");
    }
    if (p.package_uris.size() > 100)
      return InvalidFieldError(pp + ".packageUris", "at most 100 allowed");
    if (p.python_module.empty())
      return InvalidFieldError(pp + ".pythonModule", "required; e.g. trainer.task");
    TY_RETURN_IF_ERROR(ValidateEnv(p.env, pp + ".env"));
  }
  if (pool.disk_spec) {
    const DiskSpec& d = *pool.disk_spec;
    if (!d.boot_disk_type.empty() && d.boot_disk_type != "pd-ssd" &&
        d.boot_disk_type != "pd-standard" && d.boot_disk_type != "hyperdisk-balanced") {
      return InvalidFieldError(
          path + ".diskSpec.bootDiskType",
          "'" + d.boot_disk_type + "' is not one of pd-ssd, pd-standard, hyperdisk-balanced");
    }
    if (d.boot_disk_size_gb != 0 && (d.boot_disk_size_gb < 10 || d.boot_disk_size_gb > 65536)) {
      return InvalidFieldError(
          path + ".diskSpec.bootDiskSizeGb",
          "must be between 10 and 65536, got " + std::to_string(d.boot_disk_size_gb));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<machines::ResolvedMachine> ResolveMachineSpec(const MachineSpec& m,
                                                       const std::string& path) {
  return machines::MachineCatalog::Default().Resolve(
      {m.machine_type, m.accelerator_type, static_cast<int>(m.accelerator_count)}, path);
}

Status ValidateLabels(const std::map<std::string, std::string>& labels, const std::string& path) {
  if (labels.size() > kMaxLabels) {
    return InvalidFieldError(path, "at most " + std::to_string(kMaxLabels) + " labels are allowed");
  }
  for (const auto& [key, value] : labels) {
    const std::string p = path + "." + key;
    if (key.empty() || Utf8Length(key) > 63 || !(key[0] >= 'a' && key[0] <= 'z') ||
        !IsLabelText(key)) {
      return InvalidFieldError(
          p,
          "label keys must be 1-63 characters of lowercase letters, digits, '_' "
          "and '-', starting with a lowercase letter");
    }
    if (Utf8Length(value) > 63 || !IsLabelText(value)) {
      return InvalidFieldError(p,
                               "label values must be at most 63 characters of lowercase letters, "
                               "digits, '_' and '-', got '" +
                                   value + "'");
    }
  }
  return PriorityFromLabels(labels, path).status();
}

Status ValidateCustomJobSpec(const CustomJobSpec& spec, const std::string& path) {
  const std::string pools = path + ".workerPoolSpecs";
  if (spec.worker_pool_specs.empty()) {
    return InvalidFieldError(pools, "at least one worker pool is required");
  }
  if (spec.worker_pool_specs.size() > kMaxWorkerPools) {
    return InvalidFieldError(pools,
                             "at most 4 worker pools (primary, workers, parameter servers, "
                             "evaluators) are allowed, got " +
                                 std::to_string(spec.worker_pool_specs.size()));
  }
  for (size_t i = 0; i < spec.worker_pool_specs.size(); ++i) {
    TY_RETURN_IF_ERROR(
        ValidatePool(spec.worker_pool_specs[i], i, pools + "[" + std::to_string(i) + "]"));
  }
  if (spec.scheduling) {
    const Scheduling& s = *spec.scheduling;
    if (s.timeout && s.timeout->count() <= 0) {
      return InvalidFieldError(path + ".scheduling.timeout", "must be positive, e.g. \"3600s\"");
    }
    if (s.max_wait_duration && s.max_wait_duration->count() < 0) {
      return InvalidFieldError(path + ".scheduling.maxWaitDuration", "must not be negative");
    }
    bool known = s.strategy.empty();
    std::string names;
    for (const SchedulingStrategy& k : SchedulingStrategies()) {
      known |= (s.strategy == k.name);
      names += (names.empty() ? "" : ", ") + std::string(k.name);
    }
    if (!known) {
      return InvalidFieldError(path + ".scheduling.strategy",
                               "'" + s.strategy + "' is not one of " + names);
    }
  }
  if (!spec.base_output_directory.empty()) {
    const std::string& dir = spec.base_output_directory;
    const std::string p = path + ".baseOutputDirectory.outputUriPrefix";
    if (!dir.starts_with("gs://") && !dir.starts_with("/")) {
      return InvalidFieldError(p,
                               "'" + dir + "' must be a gs://BUCKET/PATH URI or an absolute path");
    }
    auto resolved = ResolveStoragePath(dir);
    if (!resolved.ok()) return InvalidFieldError(p, resolved.status().message());
  }
  if (spec.enable_web_access) {
    return InvalidFieldError(path + ".enableWebAccess",
                             "interactive shells are not supported by Trainyard; remove it");
  }
  if (!spec.tensorboard.empty()) {
    return InvalidFieldError(
        path + ".tensorboard",
        "Vertex AI TensorBoard instances are not supported by Trainyard; remove it (the SDK's "
        "tensorboard= argument): logs written to AIP_TENSORBOARD_LOG_DIR are shown as training "
        "curves in Trainyard's console");
  }
  if (!spec.experiment.empty() || !spec.experiment_run.empty()) {
    return InvalidFieldError(path + (spec.experiment.empty() ? ".experimentRun" : ".experiment"),
                             "Vertex AI Experiments are not supported by Trainyard; remove it "
                             "(the SDK's experiment= and experiment_run= arguments)");
  }
  if (spec.enable_dashboard_access) {
    return InvalidFieldError(path + ".enableDashboardAccess",
                             "dashboards are not supported by Trainyard; remove it");
  }
  if (const std::string& role = spec.tf_config_primary_role;
      !role.empty() && role != "chief" && role != "master") {
    return InvalidFieldError(path + ".trainyardTfConfigPrimaryRole",
                             "'" + role + "' is not one of chief, master");
  }
  if (!spec.persistent_resource_id.empty()) {
    return InvalidFieldError(
        path + ".persistentResourceId",
        "persistent resources are not supported by Trainyard; remove it (jobs run on "
        "the server's own hosts)");
  }
  return Status::Ok();
}

Status ValidateCustomJob(const CustomJob& job) {
  if (job.display_name.empty()) {
    return InvalidFieldError("displayName", "required; give the job a name (--display-name)");
  }
  if (Utf8Length(job.display_name) > kMaxDisplayNameChars) {
    return InvalidFieldError("displayName", "must be at most 128 characters, got " +
                                                std::to_string(Utf8Length(job.display_name)));
  }
  TY_RETURN_IF_ERROR(ValidateLabels(job.labels, "labels"));
  return ValidateCustomJobSpec(job.job_spec, "jobSpec");
}

}  // namespace trainyard::spec
