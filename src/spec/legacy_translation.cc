#include "spec/legacy_translation.h"

#include <cctype>
#include <cmath>
#include <set>

#include "machines/regions.h"
#include "protojson/reader.h"
#include "spec/job_priority.h"
#include "spec/legacy_machines.h"

namespace trainyard::spec {
namespace {

Status InvalidTrainingInput(const std::string& field, const std::string& message) {
  return InvalidFieldError("trainingInput." + field, message);
}

constexpr const char* kNoTpu =
    "TPUs are not served by Trainyard; use GPU machines (scaleTier CUSTOM with a Compute Engine "
    "machine type and acceleratorConfig, or a legacy GPU machine such as standard_gpu)";

// One replica group of the request: master, worker, parameterServer or evaluator.
struct Group {
  std::string field;  // "master", "worker", "parameterServer", "evaluator"
  std::string type;   // its machine type (legacy or Compute Engine name)
  const std::optional<ReplicaConfig>* config;
  int64_t count;
};

StatusOr<MachineSpec> MachineOf(const Group& g) {
  const std::string type_field = g.field + "Type";
  if (g.type == "cloud_tpu") return InvalidTrainingInput(type_field, kNoTpu);
  MachineSpec m;
  const std::optional<LegacyMachine> legacy = LegacyMachineType(g.type);
  m.machine_type = legacy ? legacy->machine_type : g.type;
  if (legacy) {
    m.accelerator_type = legacy->accelerator_type;
    m.accelerator_count = legacy->accelerator_count;
  }
  if (!g.config->has_value() || !(*g.config)->accelerator_config) return m;
  const AcceleratorConfig& a = *(*g.config)->accelerator_config;
  const std::string path = g.field + "Config.acceleratorConfig";
  if (a.type.starts_with("TPU_")) return InvalidTrainingInput(path + ".type", kNoTpu);
  if (legacy && legacy->accelerator_count > 0) {
    return InvalidTrainingInput(path,
                                "'" + g.type +
                                    "' comes with its GPUs; set acceleratorConfig only with a "
                                    "Compute Engine machine type (e.g. n1-standard-8)");
  }
  if (a.count < 0 || a.count > 16) return InvalidTrainingInput(path + ".count", "must be 0 to 16");
  if (a.count > 0 && a.type.empty())
    return InvalidTrainingInput(path + ".type", "required with a count");
  m.accelerator_type = a.type;
  m.accelerator_count = static_cast<int32_t>(a.count);
  return m;
}

// The replica groups of the request, with the scale tier's machines and counts filled in.
StatusOr<std::vector<Group>> GroupsOf(const TrainingInput& in) {
  std::vector<Group> groups = {
      {"master", in.master_type, &in.master_config, 1},
      {"worker", in.worker_type, &in.worker_config, in.worker_count},
      {"parameterServer", in.parameter_server_type, &in.parameter_server_config,
       in.parameter_server_count},
      {"evaluator", in.evaluator_type, &in.evaluator_config, in.evaluator_count}};
  const ScaleTier tier = in.scale_tier.value_or(ScaleTier::kBasic);
  if (tier == ScaleTier::kBasicTpu) return InvalidTrainingInput("scaleTier", kNoTpu);
  for (size_t i = 1; i < groups.size(); ++i) {
    const Group& g = groups[i];
    if (g.count < 0 || g.count > 1000)
      return InvalidTrainingInput(g.field + "Count", "must be 0 to 1000");
  }
  if (tier == ScaleTier::kCustom) {
    if (in.master_type.empty()) {
      return InvalidTrainingInput("masterType",
                                  "required when scaleTier is CUSTOM (e.g. n1-standard-4 or a "
                                  "legacy name such as complex_model_m)");
    }
    for (size_t i = 1; i < groups.size(); ++i) {
      if (groups[i].count > 0 && groups[i].type.empty()) {
        return InvalidTrainingInput(groups[i].field + "Type",
                                    "required when " + groups[i].field + "Count is greater than 0");
      }
    }
    return groups;
  }
  for (const Group& g : groups) {
    if (!g.type.empty() || (g.field != "master" && g.count != 0)) {
      return InvalidTrainingInput(g.field + (g.type.empty() ? "Count" : "Type"),
                                  "applies only with scaleTier CUSTOM (scale tier " +
                                      std::string(ScaleTierName(tier)) +
                                      " chooses the machines); set scaleTier: CUSTOM or remove it");
    }
  }
  const ScaleTierPreset preset = *ScaleTierPresetOf(tier);
  groups[0].type = preset.master;
  groups[1] = {"worker", preset.worker, &in.worker_config, preset.worker_count};
  groups[2] = {"parameterServer", preset.parameter_server, &in.parameter_server_config,
               preset.parameter_server_count};
  return groups;
}

// The program of one group: its container, or the package in its executor image.
Status SetTask(const TrainingInput& in, const Group& g, const MachineSpec& machine,
               WorkerPoolSpec* pool) {
  const ReplicaConfig* own = g.config->has_value() ? &**g.config : nullptr;
  // A group without an image of its own runs the master's (AI Platform's rule), with its
  // command and args unless the group gives its own.
  const ReplicaConfig* code = own && !own->image_uri.empty() ? own
                              : in.master_config             ? &*in.master_config
                                                             : own;
  std::string image = code ? code->image_uri : "";
  auto pick = [&](auto member) {
    return own && !(own->*member).empty() ? own->*member
           : code                         ? code->*member
                                          : std::vector<std::string>{};
  };
  if (own && !own->tpu_tf_version.empty())
    return InvalidTrainingInput(g.field + "Config.tpuTfVersion", kNoTpu);
  std::vector<std::string> args = in.args;
  if (!in.job_dir.empty()) args.push_back("--job-dir=" + in.job_dir);
  if (in.package_uris.empty()) {
    if (image.empty()) {
      return InvalidTrainingInput(
          "packageUris",
          "required: the trainer package (gs://...tar.gz) with pythonModule, or a "
          "container in masterConfig.imageUri");
    }
    ContainerSpec c;
    c.image_uri = image;
    c.command = pick(&ReplicaConfig::container_command);
    c.args = pick(&ReplicaConfig::container_args);
    c.args.insert(c.args.end(), args.begin(), args.end());
    pool->container_spec = std::move(c);
    return Status::Ok();
  }
  if (in.python_module.empty()) {
    return InvalidTrainingInput("pythonModule",
                                "required with packageUris: the module to run, e.g. trainer.task");
  }
  if (own && (!own->container_command.empty() || !own->container_args.empty())) {
    return InvalidTrainingInput(
        g.field + "Config.containerCommand",
        "applies to custom containers only; a package job runs `python -m " + in.python_module +
            "`");
  }
  PythonPackageSpec p;
  if (image.empty()) {
    TY_ASSIGN_OR_RETURN(image, ExecutorImageForRuntime(in.runtime_version, in.python_version,
                                                       machine.accelerator_count > 0));
  }
  p.executor_image_uri = image;
  p.package_uris = in.package_uris;
  p.python_module = in.python_module;
  p.args = std::move(args);
  pool->python_package_spec = std::move(p);
  return Status::Ok();
}

StatusOr<std::vector<WorkerPoolSpec>> PoolsOf(const TrainingInput& in) {
  TY_ASSIGN_OR_RETURN(std::vector<Group> groups, GroupsOf(in));
  std::vector<WorkerPoolSpec> pools;
  for (const Group& g : groups) {
    WorkerPoolSpec pool;
    if (g.count > 0) {
      TY_ASSIGN_OR_RETURN(MachineSpec machine, MachineOf(g));
      TY_RETURN_IF_ERROR(SetTask(in, g, machine, &pool));
      pool.machine_spec = machine;
      pool.replica_count = g.count;
      if (g.config->has_value() && (*g.config)->disk_config) {
        const DiskConfig& d = *(*g.config)->disk_config;
        pool.disk_spec = DiskSpec{d.boot_disk_type, d.boot_disk_size_gb};
      }
    }
    pools.push_back(std::move(pool));
  }
  while (pools.size() > 1 && pools.back().IsEmpty()) pools.pop_back();
  return pools;
}

// AI Platform writes "chief" for TF 2.x runtimes and for custom containers that ask
// (useChiefInTfConfig, which has no effect on runtime jobs), "master" otherwise.
std::string PrimaryRole(const TrainingInput& in) {
  if (!in.runtime_version.empty()) return in.runtime_version.starts_with("1.") ? "master" : "chief";
  return in.use_chief_in_tf_config ? "chief" : "master";
}

StatusOr<CustomJobSpec> JobSpecOf(const TrainingInput& in) {
  if (in.region.empty()) {
    return InvalidTrainingInput("region",
                                "required: the region the job runs in (gcloud: --region), e.g. "
                                "us-central1");
  }
  TY_RETURN_IF_ERROR(machines::CheckRegion("trainingInput.region", in.region));
  if (in.enable_web_access) {
    return InvalidTrainingInput("enableWebAccess",
                                "interactive shells are not supported by Trainyard; remove "
                                "--enable-web-access");
  }
  if (in.master_config && !in.master_config->image_uri.empty() && !in.runtime_version.empty()) {
    return InvalidTrainingInput("runtimeVersion",
                                "only one of masterConfig.imageUri and runtimeVersion can "
                                "be set");
  }
  CustomJobSpec spec;
  TY_ASSIGN_OR_RETURN(spec.worker_pool_specs, PoolsOf(in));
  spec.service_account = in.service_account;
  spec.base_output_directory = in.job_dir;
  spec.tf_config_primary_role = PrimaryRole(in);
  if (const auto& s = in.scheduling) {
    if (s->priority < kMinPriority || s->priority > kMaxPriority) {
      return PriorityRangeError("trainingInput.scheduling.priority", std::to_string(s->priority));
    }
    Scheduling out;
    out.timeout = s->max_running_time;
    out.max_wait_duration = s->max_wait_time;
    if (out.timeout || out.max_wait_duration) spec.scheduling = out;
  }
  return spec;
}

StatusOr<tuning::ParameterSpec> ParameterOf(const LegacyParameterSpec& p, const std::string& path) {
  tuning::ParameterSpec out;
  if (p.parameter_name.empty()) return InvalidTrainingInput(path + ".parameterName", "required");
  out.parameter_id = p.parameter_name;
  switch (p.scale_type) {
    case LegacyScaleType::kNone:
      out.scale_type = tuning::ScaleType::kUnspecified;
      break;
    case LegacyScaleType::kLinear:
      out.scale_type = tuning::ScaleType::kLinear;
      break;
    case LegacyScaleType::kLog:
      out.scale_type = tuning::ScaleType::kLog;
      break;
    case LegacyScaleType::kReverseLog:
      out.scale_type = tuning::ScaleType::kReverseLog;
      break;
  }
  switch (p.type) {
    case LegacyParameterType::kDouble:
      out.type = tuning::ParameterType::kDouble;
      out.min_value = p.min_value;
      out.max_value = p.max_value;
      return out;
    case LegacyParameterType::kInteger:
      // minValue/maxValue are doubles on the wire (gcloud sends 1.0 for 1).
      for (double v : {p.min_value, p.max_value}) {
        if (v != std::floor(v) || std::fabs(v) > 9.0e15) {
          return InvalidTrainingInput(path + (v == p.min_value ? ".minValue" : ".maxValue"),
                                      "an INTEGER parameter's bounds must be whole numbers");
        }
      }
      out.type = tuning::ParameterType::kInteger;
      out.int_min = static_cast<int64_t>(p.min_value);
      out.int_max = static_cast<int64_t>(p.max_value);
      return out;
    case LegacyParameterType::kCategorical:
      out.type = tuning::ParameterType::kCategorical;
      out.categorical_values = p.categorical_values;
      return out;
    case LegacyParameterType::kDiscrete:
      out.type = tuning::ParameterType::kDiscrete;
      out.discrete_values = p.discrete_values;
      return out;
    case LegacyParameterType::kUnspecified:
      break;
  }
  return InvalidTrainingInput(path + ".type", "required: DOUBLE, INTEGER, CATEGORICAL or DISCRETE");
}

StatusOr<tuning::StudySpec> StudyOf(const LegacyHyperparameterSpec& h) {
  const std::string path = "hyperparameters";
  tuning::StudySpec study;
  if (h.goal == LegacyGoal::kUnspecified) {
    return InvalidTrainingInput(path + ".goal", "required; use MAXIMIZE or MINIMIZE");
  }
  const std::string tag = h.hyperparameter_metric_tag.empty()
                              ? std::string(kDefaultHyperparameterMetricTag)
                              : h.hyperparameter_metric_tag;
  study.metrics.push_back(
      {tag, h.goal == LegacyGoal::kMaximize ? tuning::Goal::kMaximize : tuning::Goal::kMinimize});
  for (size_t i = 0; i < h.params.size(); ++i) {
    TY_ASSIGN_OR_RETURN(tuning::ParameterSpec p,
                        ParameterOf(h.params[i], path + ".params[" + std::to_string(i) + "]"));
    study.parameters.push_back(std::move(p));
  }
  switch (h.algorithm) {
    case LegacyAlgorithm::kUnspecified:
      study.algorithm = tuning::Algorithm::kUnspecified;
      break;
    case LegacyAlgorithm::kGridSearch:
      study.algorithm = tuning::Algorithm::kGridSearch;
      break;
    case LegacyAlgorithm::kRandomSearch:
      study.algorithm = tuning::Algorithm::kRandomSearch;
      break;
    case LegacyAlgorithm::kPopulationBased:
      return InvalidTrainingInput(path + ".algorithm",
                                  "POPULATION_BASED_TRAINING is not served; use "
                                  "ALGORITHM_UNSPECIFIED (Bayesian), GRID_SEARCH or "
                                  "RANDOM_SEARCH");
  }
  if (h.enable_trial_early_stopping) study.automated_stopping = tuning::MedianStoppingSpec{};
  if (!h.resume_previous_job_id.empty()) {
    return InvalidTrainingInput(path + ".resumePreviousJobId",
                                "not supported by Trainyard; remove it");
  }
  return study;
}

LegacyJobState TrialState(const tuning::Trial& t) {
  switch (t.state) {
    case tuning::TrialState::kUnspecified:
    case tuning::TrialState::kRequested:
      return LegacyJobState::kQueued;
    case tuning::TrialState::kActive:
    case tuning::TrialState::kStopping:
      return LegacyJobState::kRunning;
    case tuning::TrialState::kSucceeded:
      return LegacyJobState::kSucceeded;
    case tuning::TrialState::kInfeasible:
      break;
  }
  return !t.job_failed && !t.stop_reason.empty() ? LegacyJobState::kCancelled
                                                 : LegacyJobState::kFailed;
}

}  // namespace

StatusOr<LegacyBacking> TranslateTrainingInput(const TrainingInput& input) {
  LegacyBacking out;
  TY_ASSIGN_OR_RETURN(out.job_spec, JobSpecOf(input));
  if (!input.hyperparameters) return out;
  const LegacyHyperparameterSpec& h = *input.hyperparameters;
  // 0 is "unset" (AI Platform's defaults below); a negative count is no default but a mistake.
  for (const auto& [field, value] :
       {std::pair{"maxTrials", h.max_trials}, std::pair{"maxParallelTrials", h.max_parallel_trials},
        std::pair{"maxFailedTrials", h.max_failed_trials}}) {
    if (value < 0) {
      return InvalidTrainingInput(
          std::string("hyperparameters.") + field,
          "must be >= 0 (0 or unset takes the default), got " + std::to_string(value));
    }
  }
  HyperparameterTuningJob tuning;
  TY_ASSIGN_OR_RETURN(tuning.study_spec, StudyOf(h));
  tuning.max_trial_count = h.max_trials > 0 ? h.max_trials : 1;
  tuning.parallel_trial_count = h.max_parallel_trials > 0 ? h.max_parallel_trials : 1;
  tuning.max_failed_trial_count = h.max_failed_trials;
  tuning.trial_job_spec = out.job_spec;
  out.tuning = std::move(tuning);
  return out;
}

TrainingOutput TrainingOutputOf(const HyperparameterTuningJob& tuning) {
  TrainingOutput out;
  out.is_hyperparameter_tuning_job = true;
  const std::string tag =
      tuning.study_spec.metrics.empty() ? "" : tuning.study_spec.metrics[0].metric_id;
  out.hyperparameter_metric_tag = tag;
  for (const tuning::Trial& t : tuning.trials) {
    LegacyTrialOutput o;
    o.trial_id = t.id;
    o.state = TrialState(t);
    for (const auto& p : t.parameters) {
      o.hyperparameters[p.parameter_id] = tuning::FormatParameterValue(p.value);
    }
    if (t.final_measurement) {
      o.final_objective_value = t.final_measurement->Metric(tag);
      o.final_training_step = t.final_measurement->step_count;
    }
    o.start_time = t.start_time;
    o.end_time = t.end_time;
    o.is_trial_stopped_early = t.early_stopped;
    if (o.state == LegacyJobState::kSucceeded) ++out.completed_trial_count;
    out.trials.push_back(std::move(o));
  }
  return out;
}

StatusOr<std::string> ExecutorImageForRuntime(const std::string& runtime_version,
                                              const std::string& python_version, bool gpu) {
  static const std::set<std::string> kRuntimes = {"1.15", "2.1", "2.2", "2.3", "2.4",  "2.5",
                                                  "2.6",  "2.7", "2.8", "2.9", "2.10", "2.11"};
  if (runtime_version.empty()) {
    return InvalidTrainingInput(
        "runtimeVersion",
        "required for a package job without masterConfig.imageUri (gcloud: "
        "--runtime-version=2.11), or name an image with --master-image-uri");
  }
  if (kRuntimes.count(runtime_version) == 0) {
    std::string list;
    for (const auto& r : kRuntimes) list += (list.empty() ? "" : ", ") + r;
    return InvalidTrainingInput("runtimeVersion",
                                "'" + runtime_version + "' is not one of " + list);
  }
  if (!python_version.empty() && !python_version.starts_with("3.")) {
    return InvalidTrainingInput("pythonVersion", "'" + python_version +
                                                     "' is not served: runtimes run "
                                                     "Python 3 (use 3.7)");
  }
  return std::string("us-docker.pkg.dev/vertex-ai/training/") +
         (gpu ? "pytorch-gpu" : "pytorch-xla") + ".1-13.py310:latest";
}

std::string LegacyTaskName(int pool_index, int replica_index) {
  static constexpr const char* kNames[] = {"master", "worker", "ps", "evaluator"};
  const char* role = pool_index >= 0 && pool_index < 4 ? kNames[pool_index] : "replica";
  return std::string(role) + "-replica-" + std::to_string(replica_index);
}

}  // namespace trainyard::spec
