#include "spec/legacy_job_json.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "protojson/parse.h"
#include "protojson/reader.h"
#include "protojson/writer.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;
using protojson::EnumEntry;
using protojson::EnumType;
using Fields = protojson::ObjectReader;
using Writer = protojson::ObjectWriter;

constexpr EnumEntry<ScaleTier> kScaleTiers[] = {
    {"BASIC", 0, ScaleTier::kBasic},        {"STANDARD_1", 1, ScaleTier::kStandard1},
    {"PREMIUM_1", 3, ScaleTier::kPremium1}, {"BASIC_GPU", 6, ScaleTier::kBasicGpu},
    {"BASIC_TPU", 7, ScaleTier::kBasicTpu}, {"CUSTOM", 5, ScaleTier::kCustom}};
constexpr EnumType<ScaleTier> kScaleTierType{"google.cloud.ml.v1.TrainingInput.ScaleTier",
                                             kScaleTiers};

constexpr EnumEntry<LegacyParameterType> kParameterTypes[] = {
    {"PARAMETER_TYPE_UNSPECIFIED", 0, LegacyParameterType::kUnspecified},
    {"DOUBLE", 1, LegacyParameterType::kDouble},
    {"INTEGER", 2, LegacyParameterType::kInteger},
    {"CATEGORICAL", 3, LegacyParameterType::kCategorical},
    {"DISCRETE", 4, LegacyParameterType::kDiscrete}};
constexpr EnumType<LegacyParameterType> kParameterTypeType{
    "google.cloud.ml.v1.ParameterSpec.ParameterType", kParameterTypes};

constexpr EnumEntry<LegacyScaleType> kScaleTypes[] = {
    {"NONE", 0, LegacyScaleType::kNone},
    {"UNIT_LINEAR_SCALE", 1, LegacyScaleType::kLinear},
    {"UNIT_LOG_SCALE", 2, LegacyScaleType::kLog},
    {"UNIT_REVERSE_LOG_SCALE", 3, LegacyScaleType::kReverseLog}};
constexpr EnumType<LegacyScaleType> kScaleTypeType{"google.cloud.ml.v1.ParameterSpec.ScaleType",
                                                   kScaleTypes};

constexpr EnumEntry<LegacyGoal> kGoals[] = {{"GOAL_TYPE_UNSPECIFIED", 0, LegacyGoal::kUnspecified},
                                            {"MAXIMIZE", 1, LegacyGoal::kMaximize},
                                            {"MINIMIZE", 2, LegacyGoal::kMinimize}};
constexpr EnumType<LegacyGoal> kGoalType{"google.cloud.ml.v1.HyperparameterSpec.GoalType", kGoals};

constexpr EnumEntry<LegacyAlgorithm> kAlgorithms[] = {
    {"ALGORITHM_UNSPECIFIED", 0, LegacyAlgorithm::kUnspecified},
    {"GRID_SEARCH", 1, LegacyAlgorithm::kGridSearch},
    {"RANDOM_SEARCH", 2, LegacyAlgorithm::kRandomSearch},
    {"POPULATION_BASED_TRAINING", 3, LegacyAlgorithm::kPopulationBased}};
constexpr EnumType<LegacyAlgorithm> kAlgorithmType{
    "google.cloud.ml.v1.HyperparameterSpec.Algorithm", kAlgorithms};

// AcceleratorConfig.type: the names of the proto's enum (TPUs included: the translation refuses
// them with its own message).
constexpr std::string_view kAcceleratorTypes[] = {"ACCELERATOR_TYPE_UNSPECIFIED",
                                                  "NVIDIA_TESLA_K80",
                                                  "NVIDIA_TESLA_P100",
                                                  "NVIDIA_TESLA_V100",
                                                  "NVIDIA_TESLA_P4",
                                                  "NVIDIA_TESLA_T4",
                                                  "NVIDIA_TESLA_A100",
                                                  "TPU_V2",
                                                  "TPU_V3",
                                                  "TPU_V2_POD",
                                                  "TPU_V3_POD",
                                                  "TPU_V4_POD"};

StatusOr<AcceleratorConfig> DecodeAccelerator(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"count", "type"}));
  AcceleratorConfig a;
  TY_RETURN_IF_ERROR(f.Int64("count", &a.count));
  TY_RETURN_IF_ERROR(f.String("type", &a.type));
  if (std::find(std::begin(kAcceleratorTypes), std::end(kAcceleratorTypes), a.type) ==
          std::end(kAcceleratorTypes) &&
      !a.type.empty()) {
    std::string names;
    for (std::string_view n : kAcceleratorTypes)
      names += (names.empty() ? "" : ", ") + std::string(n);
    return protojson::InvalidValueError(f.PathOf("type"),
                                        "google.cloud.ml.v1.AcceleratorConfig.AcceleratorType",
                                        json(a.type), "expected one of " + names);
  }
  if (a.type == "ACCELERATOR_TYPE_UNSPECIFIED") a.type.clear();
  return a;
}

StatusOr<DiskConfig> DecodeDiskConfig(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"bootDiskSizeGb", "bootDiskType"}));
  DiskConfig d;
  TY_RETURN_IF_ERROR(f.Int32("bootDiskSizeGb", &d.boot_disk_size_gb));
  TY_RETURN_IF_ERROR(f.String("bootDiskType", &d.boot_disk_type));
  return d;
}

StatusOr<ReplicaConfig> DecodeReplicaConfig(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"acceleratorConfig", "imageUri", "containerCommand",
                                              "containerArgs", "diskConfig", "tpuTfVersion"}));
  ReplicaConfig r;
  TY_RETURN_IF_ERROR(f.Message("acceleratorConfig", &r.accelerator_config, DecodeAccelerator));
  TY_RETURN_IF_ERROR(f.String("imageUri", &r.image_uri));
  TY_RETURN_IF_ERROR(f.Strings("containerCommand", &r.container_command));
  TY_RETURN_IF_ERROR(f.Strings("containerArgs", &r.container_args));
  TY_RETURN_IF_ERROR(f.Message("diskConfig", &r.disk_config, DecodeDiskConfig));
  TY_RETURN_IF_ERROR(f.String("tpuTfVersion", &r.tpu_tf_version));
  return r;
}

StatusOr<LegacyScheduling> DecodeLegacyScheduling(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"maxRunningTime", "maxWaitTime", "priority",
                                              "resilientToWorkerRestart", "strategy"}));
  LegacyScheduling s;
  std::optional<Duration> running, waiting;
  TY_RETURN_IF_ERROR(f.Duration("maxRunningTime", &running));
  TY_RETURN_IF_ERROR(f.Duration("maxWaitTime", &waiting));
  if (running) s.max_running_time = std::chrono::duration_cast<std::chrono::milliseconds>(*running);
  if (waiting) s.max_wait_time = std::chrono::duration_cast<std::chrono::milliseconds>(*waiting);
  TY_RETURN_IF_ERROR(f.Int32("priority", &s.priority));
  bool resilient = false;
  TY_RETURN_IF_ERROR(f.Bool("resilientToWorkerRestart", &resilient));
  std::string strategy;
  TY_RETURN_IF_ERROR(f.String("strategy", &strategy));
  if (resilient) {
    return protojson::FieldError(f.PathOf("resilientToWorkerRestart"),
                                 "not supported by Trainyard; remove it (a failed replica restarts "
                                 "the job up to the server's --max-restarts)");
  }
  if (!strategy.empty() && strategy != "STRATEGY_UNSPECIFIED" && strategy != "ON_DEMAND") {
    return protojson::FieldError(f.PathOf("strategy"),
                                 "'" + strategy + "' is not supported; use ON_DEMAND or remove it");
  }
  return s;
}

StatusOr<LegacyParameterSpec> DecodeParameter(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"parameterName", "type", "minValue", "maxValue",
                                              "discreteValues", "categoricalValues", "scaleType"}));
  LegacyParameterSpec p;
  TY_RETURN_IF_ERROR(f.String("parameterName", &p.parameter_name));
  TY_RETURN_IF_ERROR(f.Enum("type", kParameterTypeType, &p.type));
  TY_RETURN_IF_ERROR(f.Double("minValue", &p.min_value));
  TY_RETURN_IF_ERROR(f.Double("maxValue", &p.max_value));
  TY_RETURN_IF_ERROR(f.Repeated("discreteValues", &p.discrete_values, protojson::ReadDouble));
  TY_RETURN_IF_ERROR(f.Strings("categoricalValues", &p.categorical_values));
  TY_RETURN_IF_ERROR(f.Enum("scaleType", kScaleTypeType, &p.scale_type));
  for (const auto& [name, v] :
       {std::pair{"minValue", p.min_value}, std::pair{"maxValue", p.max_value}}) {
    if (!std::isfinite(v)) return protojson::FieldError(f.PathOf(name), "must be a finite number");
  }
  for (double v : p.discrete_values) {
    if (!std::isfinite(v)) {
      return protojson::FieldError(f.PathOf("discreteValues"), "must be finite numbers");
    }
  }
  return p;
}

StatusOr<LegacyHyperparameterSpec> DecodeHyperparameters(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Open(j, path,
                             {"goal", "params", "maxTrials", "maxParallelTrials", "maxFailedTrials",
                              "hyperparameterMetricTag", "enableTrialEarlyStopping",
                              "resumePreviousJobId", "algorithm"}));
  LegacyHyperparameterSpec h;
  TY_RETURN_IF_ERROR(f.Enum("goal", kGoalType, &h.goal));
  TY_RETURN_IF_ERROR(f.Repeated("params", &h.params, DecodeParameter));
  TY_RETURN_IF_ERROR(f.Int32("maxTrials", &h.max_trials));
  TY_RETURN_IF_ERROR(f.Int32("maxParallelTrials", &h.max_parallel_trials));
  TY_RETURN_IF_ERROR(f.Int32("maxFailedTrials", &h.max_failed_trials));
  TY_RETURN_IF_ERROR(f.String("hyperparameterMetricTag", &h.hyperparameter_metric_tag));
  TY_RETURN_IF_ERROR(f.Bool("enableTrialEarlyStopping", &h.enable_trial_early_stopping));
  TY_RETURN_IF_ERROR(f.String("resumePreviousJobId", &h.resume_previous_job_id));
  TY_RETURN_IF_ERROR(f.Enum("algorithm", kAlgorithmType, &h.algorithm));
  return h;
}

// The TrainingInput fields Trainyard cannot honour, each refused with the way forward.
Status RejectUnsupportedInput(const Fields& f) {
  TY_RETURN_IF_ERROR(f.RejectIfSet("nasJobSpec", "Neural Architecture Search is not served"));
  TY_RETURN_IF_ERROR(f.RejectIfSet("network", "replicas use the host's network; remove it"));
  return f.RejectIfSet("encryptionConfig", "remove it (data is not encrypted with a KMS key)");
}

Status DecodeReplicaGroups(const Fields& f, TrainingInput* in) {
  TY_RETURN_IF_ERROR(f.String("masterType", &in->master_type));
  TY_RETURN_IF_ERROR(f.Message("masterConfig", &in->master_config, DecodeReplicaConfig));
  TY_RETURN_IF_ERROR(f.String("workerType", &in->worker_type));
  TY_RETURN_IF_ERROR(f.Message("workerConfig", &in->worker_config, DecodeReplicaConfig));
  TY_RETURN_IF_ERROR(f.Int64("workerCount", &in->worker_count));
  TY_RETURN_IF_ERROR(f.String("parameterServerType", &in->parameter_server_type));
  TY_RETURN_IF_ERROR(
      f.Message("parameterServerConfig", &in->parameter_server_config, DecodeReplicaConfig));
  TY_RETURN_IF_ERROR(f.Int64("parameterServerCount", &in->parameter_server_count));
  TY_RETURN_IF_ERROR(f.String("evaluatorType", &in->evaluator_type));
  TY_RETURN_IF_ERROR(f.Message("evaluatorConfig", &in->evaluator_config, DecodeReplicaConfig));
  return f.Int64("evaluatorCount", &in->evaluator_count);
}

json AcceleratorToJson(const AcceleratorConfig& a) {
  return Writer().Int64("count", a.count).String("type", a.type).Build();
}

json ReplicaConfigToJson(const ReplicaConfig& r) {
  Writer w;
  if (r.accelerator_config) w.Value("acceleratorConfig", AcceleratorToJson(*r.accelerator_config));
  w.String("imageUri", r.image_uri)
      .Strings("containerCommand", r.container_command)
      .Strings("containerArgs", r.container_args);
  if (r.disk_config) {
    w.Value("diskConfig", Writer()
                              .Int32("bootDiskSizeGb", r.disk_config->boot_disk_size_gb)
                              .String("bootDiskType", r.disk_config->boot_disk_type)
                              .Build());
  }
  return w.String("tpuTfVersion", r.tpu_tf_version).Build();
}

json ParameterToJson(const LegacyParameterSpec& p) {
  Writer w;
  w.String("parameterName", p.parameter_name);
  if (p.type != LegacyParameterType::kUnspecified)
    w.Value("type", kParameterTypeType.NameOf(p.type));
  if (p.min_value != 0) w.Value("minValue", p.min_value);
  if (p.max_value != 0) w.Value("maxValue", p.max_value);
  if (!p.discrete_values.empty()) w.Value("discreteValues", p.discrete_values);
  w.Strings("categoricalValues", p.categorical_values);
  if (p.scale_type != LegacyScaleType::kNone)
    w.Value("scaleType", kScaleTypeType.NameOf(p.scale_type));
  return w.Build();
}

json HyperparametersToJson(const LegacyHyperparameterSpec& h) {
  Writer w;
  if (h.goal != LegacyGoal::kUnspecified) w.Value("goal", kGoalType.NameOf(h.goal));
  json params = json::array();
  for (const auto& p : h.params) params.push_back(ParameterToJson(p));
  w.Value("params", params)
      .Int32("maxTrials", h.max_trials)
      .Int32("maxParallelTrials", h.max_parallel_trials)
      .Int32("maxFailedTrials", h.max_failed_trials)
      .String("hyperparameterMetricTag", h.hyperparameter_metric_tag)
      .Bool("enableTrialEarlyStopping", h.enable_trial_early_stopping)
      .String("resumePreviousJobId", h.resume_previous_job_id);
  if (h.algorithm != LegacyAlgorithm::kUnspecified) {
    w.Value("algorithm", kAlgorithmType.NameOf(h.algorithm));
  }
  return w.Build();
}

json TrialToJson(const LegacyTrialOutput& t) {
  Writer w;
  w.String("trialId", t.trial_id);
  if (t.state != LegacyJobState::kUnspecified) w.Value("state", LegacyJobStateName(t.state));
  w.StringMap("hyperparameters", t.hyperparameters);
  if (t.final_objective_value) {
    w.Value("finalMetric", Writer()
                               .Int64("trainingStep", t.final_training_step.value_or(0))
                               .Value("objectiveValue", *t.final_objective_value)
                               .Build());
  }
  return w.Timestamp("startTime", t.start_time)
      .Timestamp("endTime", t.end_time)
      .Bool("isTrialStoppedEarly", t.is_trial_stopped_early)
      .Build();
}

}  // namespace

StatusOr<TrainingInput> TrainingInputFromJson(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path,
                                             {"scaleTier",
                                              "masterType",
                                              "masterConfig",
                                              "workerType",
                                              "workerConfig",
                                              "workerCount",
                                              "parameterServerType",
                                              "parameterServerConfig",
                                              "parameterServerCount",
                                              "evaluatorType",
                                              "evaluatorConfig",
                                              "evaluatorCount",
                                              "packageUris",
                                              "pythonModule",
                                              "args",
                                              "hyperparameters",
                                              "region",
                                              "jobDir",
                                              "runtimeVersion",
                                              "pythonVersion",
                                              "scheduling",
                                              "serviceAccount",
                                              "useChiefInTfConfig",
                                              "enableWebAccess",
                                              "nasJobSpec",
                                              "network",
                                              "encryptionConfig"},
                                             {}, "trainingInput"));
  TY_RETURN_IF_ERROR(RejectUnsupportedInput(f));
  TrainingInput in;
  if (f.Has("scaleTier")) {
    ScaleTier tier = ScaleTier::kBasic;
    TY_RETURN_IF_ERROR(f.Enum("scaleTier", kScaleTierType, &tier));
    in.scale_tier = tier;
  }
  TY_RETURN_IF_ERROR(DecodeReplicaGroups(f, &in));
  TY_RETURN_IF_ERROR(f.Strings("packageUris", &in.package_uris));
  TY_RETURN_IF_ERROR(f.String("pythonModule", &in.python_module));
  TY_RETURN_IF_ERROR(f.Strings("args", &in.args));
  TY_RETURN_IF_ERROR(f.Message("hyperparameters", &in.hyperparameters, DecodeHyperparameters));
  TY_RETURN_IF_ERROR(f.String("region", &in.region));
  TY_RETURN_IF_ERROR(f.String("jobDir", &in.job_dir));
  TY_RETURN_IF_ERROR(f.String("runtimeVersion", &in.runtime_version));
  TY_RETURN_IF_ERROR(f.String("pythonVersion", &in.python_version));
  TY_RETURN_IF_ERROR(f.Message("scheduling", &in.scheduling, DecodeLegacyScheduling));
  TY_RETURN_IF_ERROR(f.String("serviceAccount", &in.service_account));
  TY_RETURN_IF_ERROR(f.Bool("useChiefInTfConfig", &in.use_chief_in_tf_config));
  TY_RETURN_IF_ERROR(f.Bool("enableWebAccess", &in.enable_web_access));
  return in;
}

StatusOr<LegacyJob> ParseLegacyJobRequest(std::string_view body) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Open(j, "", {"jobId", "labels", "trainingInput", "predictionInput"},
                             {"state", "createTime", "startTime", "endTime", "errorMessage", "etag",
                              "trainingOutput", "predictionOutput", "jobPosition"},
                             "job"));
  TY_RETURN_IF_ERROR(f.RejectIfSet(
      "predictionInput", "Trainyard serves training jobs; batch prediction is not served"));
  LegacyJob job;
  TY_RETURN_IF_ERROR(f.String("jobId", &job.job_id));
  TY_RETURN_IF_ERROR(f.StringMap("labels", &job.labels));
  TY_RETURN_IF_ERROR(f.Require("trainingInput", "the job's TrainingInput"));
  TY_ASSIGN_OR_RETURN(job.training_input,
                      TrainingInputFromJson(*f.Get("trainingInput"), "trainingInput"));
  return job;
}

json TrainingInputToJson(const TrainingInput& in) {
  Writer w;
  if (in.scale_tier) w.Value("scaleTier", kScaleTierType.NameOf(*in.scale_tier));
  w.String("masterType", in.master_type);
  if (in.master_config) w.Value("masterConfig", ReplicaConfigToJson(*in.master_config));
  w.String("workerType", in.worker_type);
  if (in.worker_config) w.Value("workerConfig", ReplicaConfigToJson(*in.worker_config));
  w.Int64("workerCount", in.worker_count).String("parameterServerType", in.parameter_server_type);
  if (in.parameter_server_config) {
    w.Value("parameterServerConfig", ReplicaConfigToJson(*in.parameter_server_config));
  }
  w.Int64("parameterServerCount", in.parameter_server_count)
      .String("evaluatorType", in.evaluator_type);
  if (in.evaluator_config) w.Value("evaluatorConfig", ReplicaConfigToJson(*in.evaluator_config));
  w.Int64("evaluatorCount", in.evaluator_count)
      .Strings("packageUris", in.package_uris)
      .String("pythonModule", in.python_module)
      .Strings("args", in.args);
  if (in.hyperparameters) w.Value("hyperparameters", HyperparametersToJson(*in.hyperparameters));
  w.String("region", in.region)
      .String("jobDir", in.job_dir)
      .String("runtimeVersion", in.runtime_version)
      .String("pythonVersion", in.python_version);
  if (const auto& s = in.scheduling) {
    w.Value("scheduling", Writer()
                              .Duration("maxRunningTime", s->max_running_time)
                              .Duration("maxWaitTime", s->max_wait_time)
                              .Int32("priority", s->priority)
                              .Build());
  }
  return w.String("serviceAccount", in.service_account)
      .Bool("useChiefInTfConfig", in.use_chief_in_tf_config)
      .Bool("enableWebAccess", in.enable_web_access)
      .Build();
}

json TrainingOutputToJson(const TrainingOutput& out) {
  Writer w;
  w.Int64("completedTrialCount", out.completed_trial_count);
  json trials = json::array();
  for (const auto& t : out.trials) trials.push_back(TrialToJson(t));
  w.Value("trials", trials);
  w.Value("consumedMLUnits", out.consumed_ml_units);  // always: gcloud's summary prints it
  return w.Bool("isHyperparameterTuningJob", out.is_hyperparameter_tuning_job)
      .String("hyperparameterMetricTag", out.hyperparameter_metric_tag)
      .Build();
}

json LegacyJobToJson(const LegacyJob& job) {
  Writer w;
  w.String("jobId", job.job_id);
  if (job.state != LegacyJobState::kUnspecified) w.Value("state", LegacyJobStateName(job.state));
  w.Timestamp("createTime", job.create_time)
      .Timestamp("startTime", job.start_time)
      .Timestamp("endTime", job.end_time)
      .String("errorMessage", job.error_message)
      .String("etag", job.etag)
      .StringMap("labels", job.labels)
      .Value("trainingInput", TrainingInputToJson(job.training_input));
  if (job.training_output) w.Value("trainingOutput", TrainingOutputToJson(*job.training_output));
  return w.Build();
}

}  // namespace trainyard::spec
