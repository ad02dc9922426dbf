#include "gcloud_flags.h"

#include <set>

#include "common/file_util.h"
#include "common/parse.h"
#include "spec/job_config_yaml.h"

namespace trainyard::cli {
namespace {

constexpr const char* kPoolKeys =
    "machine-type, replica-count, accelerator-type, accelerator-count, container-image-uri, "
    "executor-image-uri, python-module";

StatusOr<int64_t> ParseCount(const std::string& key, const std::string& v, int64_t min) {
  const std::optional<int64_t> parsed = ParseInt64(v);
  const int64_t n = parsed.value_or(0);
  if (!parsed || n < min) {
    return InvalidArgumentError("--worker-pool-spec: " + key + " must be an integer >= " +
                                std::to_string(min) + ", got '" + v + "'");
  }
  return n;
}

}  // namespace

std::vector<std::string> ParseArgList(const std::string& value) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  char delim = ',';
  std::string body = value;
  if (value.size() >= 3 && value[0] == '^' && value[2] == '^') {
    delim = value[1];
    body = value.substr(3);
  }
  size_t start = 0;
  while (true) {
    size_t pos = body.find(delim, start);
    out.push_back(body.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

StatusOr<std::map<std::string, std::string>> ParseArgDict(const std::string& flag,
                                                          const std::string& value) {
  std::map<std::string, std::string> out;
  for (const auto& item : ParseArgList(value)) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError(flag + ": '" + item + "' is not KEY=VALUE");
    }
    std::string key = item.substr(0, eq);
    if (!out.emplace(key, item.substr(eq + 1)).second) {
      return InvalidArgumentError(flag + ": key '" + key + "' is given twice");
    }
  }
  return out;
}

namespace {

// The KEY=VALUE items of one --worker-pool-spec, each key known and given once.
StatusOr<std::map<std::string, std::string>> ParsePoolKeys(const std::string& value) {
  std::map<std::string, std::string> kv;
  for (const auto& item : ParseArgList(value)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return InvalidArgumentError("--worker-pool-spec: '" + item +
                                  "' is not KEY=VALUE; valid keys are " + kPoolKeys);
    }
    std::string key = item.substr(0, eq);
    static const std::set<std::string> kKnown = {
        "machine-type",        "replica-count",      "accelerator-type", "accelerator-count",
        "container-image-uri", "executor-image-uri", "python-module"};
    static const std::set<std::string> kAutopackaging = {"local-package-path", "script",
                                                         "requirements",       "extra-packages",
                                                         "extra-dirs",         "output-image-uri"};
    if (kAutopackaging.count(key)) {
      return InvalidArgumentError("--worker-pool-spec: key '" + key +
                                  "' (autopackaging into a container image) is not supported by "
                                  "the Trainyard server; run it on this host with `trainyard ai "
                                  "custom-jobs local-run`, or map an image to a command in the "
                                  "image catalog and use container-image-uri");
    }
    if (!kKnown.count(key)) {
      return InvalidArgumentError("unknown key '" + key +
                                  "' in --worker-pool-spec; valid keys are " + kPoolKeys);
    }
    if (!kv.emplace(key, item.substr(eq + 1)).second) {
      return InvalidArgumentError("--worker-pool-spec: key '" + key + "' is given twice");
    }
  }
  return kv;
}

StatusOr<spec::MachineSpec> PoolMachine(std::map<std::string, std::string>& kv) {
  if (!kv.count("machine-type") || kv["machine-type"].empty()) {
    return InvalidArgumentError(
        "--worker-pool-spec: machine-type is required, e.g. machine-type=n1-standard-4");
  }
  spec::MachineSpec machine;
  machine.machine_type = kv["machine-type"];
  if (kv.count("accelerator-type")) {
    machine.accelerator_type = kv["accelerator-type"];
    machine.accelerator_count = 1;
  }
  if (kv.count("accelerator-count")) {
    TY_ASSIGN_OR_RETURN(int64_t n, ParseCount("accelerator-count", kv["accelerator-count"], 0));
    if (!kv.count("accelerator-type") && n > 0) {
      return InvalidArgumentError(
          "--worker-pool-spec: accelerator-count needs accelerator-type, e.g. "
          "accelerator-type=NVIDIA_TESLA_T4");
    }
    machine.accelerator_count = static_cast<int32_t>(n);
  }
  return machine;
}

// Sets the pool's program: a container image, or a Python module of packages run in an executor
// image; exactly one of the two key groups must be given.
Status SetPoolProgram(std::map<std::string, std::string>& kv,
                      const std::vector<std::string>& python_package_uris,
                      spec::WorkerPoolSpec* pool) {
  const bool container = kv.count("container-image-uri") > 0;
  const bool python = kv.count("executor-image-uri") > 0 || kv.count("python-module") > 0;
  if (container && python) {
    return InvalidArgumentError(
        "--worker-pool-spec: container-image-uri cannot be combined with executor-image-uri/"
        "python-module; give one of the two groups");
  }
  if (container) {
    if (!python_package_uris.empty()) {
      return InvalidArgumentError(
          "--python-package-uris cannot be used with container-image-uri in --worker-pool-spec");
    }
    pool->container_spec = spec::ContainerSpec{kv["container-image-uri"], {}, {}, {}};
    return Status::Ok();
  }
  if (!python) {
    return InvalidArgumentError(
        "--worker-pool-spec: give container-image-uri=IMAGE, or executor-image-uri=IMAGE with "
        "python-module=MODULE");
  }
  if (!kv.count("executor-image-uri") || !kv.count("python-module")) {
    return InvalidArgumentError(
        "--worker-pool-spec: executor-image-uri and python-module go together (with "
        "--python-package-uris)");
  }
  if (python_package_uris.empty()) {
    return InvalidArgumentError(
        "--python-package-uris is required with executor-image-uri and python-module");
  }
  pool->python_package_spec = spec::PythonPackageSpec{
      kv["executor-image-uri"], python_package_uris, kv["python-module"], {}, {}};
  return Status::Ok();
}

}  // namespace

StatusOr<spec::WorkerPoolSpec> ParseWorkerPoolSpec(
    const std::string& value, const std::vector<std::string>& python_package_uris) {
  spec::WorkerPoolSpec pool;
  if (value.empty()) return pool;  // an empty pool is skipped, as on Vertex
  TY_ASSIGN_OR_RETURN(auto kv, ParsePoolKeys(value));
  TY_ASSIGN_OR_RETURN(pool.machine_spec, PoolMachine(kv));
  pool.replica_count = 1;
  if (kv.count("replica-count")) {
    TY_ASSIGN_OR_RETURN(pool.replica_count, ParseCount("replica-count", kv["replica-count"], 1));
  }
  TY_RETURN_IF_ERROR(SetPoolProgram(kv, python_package_uris, &pool));
  return pool;
}

StatusOr<spec::CustomJob> BuildCreateRequest(const CreateFlags& flags) {
  spec::CustomJob job;
  job.display_name = flags.display_name;
  if (flags.config_path) {
    TY_ASSIGN_OR_RETURN(std::string text, ReadFile(*flags.config_path));
    TY_ASSIGN_OR_RETURN(job.job_spec,
                        spec::ParseJobConfigYaml(text, "--config " + *flags.config_path));
  }
  if (!flags.config_path && flags.worker_pool_specs.empty()) {
    return InvalidArgumentError(
        "one of --worker-pool-spec or --config is required, e.g. --worker-pool-spec="
        "machine-type=n1-standard-4,replica-count=1,container-image-uri=trainyard/bert-sentiment");
  }
  std::vector<std::string> package_uris = flags.python_package_uris
                                              ? ParseArgList(*flags.python_package_uris)
                                              : std::vector<std::string>{};
  if (!flags.worker_pool_specs.empty()) {
    job.job_spec.worker_pool_specs.clear();
    for (const auto& value : flags.worker_pool_specs) {
      TY_ASSIGN_OR_RETURN(spec::WorkerPoolSpec pool, ParseWorkerPoolSpec(value, package_uris));
      job.job_spec.worker_pool_specs.push_back(std::move(pool));
    }
  } else if (flags.python_package_uris) {
    for (auto& pool : job.job_spec.worker_pool_specs) {
      if (pool.python_package_spec) pool.python_package_spec->package_uris = package_uris;
    }
  }
  for (auto& pool : job.job_spec.worker_pool_specs) {
    if (flags.args) {
      auto args = ParseArgList(*flags.args);
      if (pool.container_spec) pool.container_spec->args = args;
      if (pool.python_package_spec) pool.python_package_spec->args = args;
    }
    if (flags.command && pool.container_spec) {
      pool.container_spec->command = ParseArgList(*flags.command);
    }
  }
  if (flags.command) {
    bool any_container = false;
    for (const auto& pool : job.job_spec.worker_pool_specs)
      any_container |= pool.container_spec.has_value();
    if (!any_container) {
      return InvalidArgumentError(
          "--command applies to container pools only; use "
          "container-image-uri in --worker-pool-spec");
    }
  }
  if (flags.labels) {
    TY_ASSIGN_OR_RETURN(job.labels, ParseArgDict("--labels", *flags.labels));
  }
  if (flags.service_account) job.job_spec.service_account = *flags.service_account;
  if (flags.network) job.job_spec.network = *flags.network;
  if (flags.enable_web_access) job.job_spec.enable_web_access = true;
  if (flags.enable_dashboard_access) job.job_spec.enable_dashboard_access = true;
  if (flags.persistent_resource_id)
    job.job_spec.persistent_resource_id = *flags.persistent_resource_id;
  return job;
}

}  // namespace trainyard::cli
