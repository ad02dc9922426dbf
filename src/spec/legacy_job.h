// LegacyJob: a training job of AI Platform Training's API (ml.googleapis.com v1 `projects.jobs`,
// GoogleCloudMlV1Job), what `gcloud ai-platform jobs submit training|describe|list|cancel` send
// and decode (shared/reference/legacy-and-pipelines.md §2.4). Plain structs in the proto's field
// order, like CustomJob; the JSON mapping (both spellings, int64 as strings, enums by name) is in
// legacy_job_json.h, and what a TrainingInput runs as — a CustomJobSpec, or a
// HyperparameterTuningJob when it has `hyperparameters` — in legacy_translation.h.
//
// Trainyard serves the training half only: predictionInput/Output, nasJobSpec, encryptionConfig,
// network and TPUs are refused with a 400 naming the field.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/custom_job.h"

namespace trainyard::spec {

// GoogleCloudMlV1Job.State; the numbers are the proto's.
enum class LegacyJobState {
  kUnspecified = 0,
  kQueued = 1,
  kPreparing = 2,
  kRunning = 3,
  kSucceeded = 4,
  kFailed = 5,
  kCancelling = 6,
  kCancelled = 7,
};
std::string_view LegacyJobStateName(LegacyJobState state);  // "QUEUED", ...
std::optional<LegacyJobState> ParseLegacyJobState(std::string_view name);
// SUCCEEDED, FAILED, CANCELLED.
bool IsTerminal(LegacyJobState state);
// The state a legacy job shows for its backing job's: PENDING is PREPARING, the others by name
// (EXPIRED and PARTIALLY_SUCCEEDED, which a training job never reaches, are FAILED).
LegacyJobState LegacyStateOf(JobState state);

// TrainingInput.ScaleTier; the numbers are the proto's.
enum class ScaleTier { kBasic = 0, kStandard1, kPremium1, kBasicGpu, kBasicTpu, kCustom };
std::string_view ScaleTierName(ScaleTier tier);

struct AcceleratorConfig {
  int64_t count = 0;
  std::string type;  // the enum name: "NVIDIA_TESLA_T4"; "" = unspecified
};

struct DiskConfig {
  int32_t boot_disk_size_gb = 0;
  std::string boot_disk_type;
};

// GoogleCloudMlV1ReplicaConfig: one of master/worker/parameterServer/evaluator's settings.
struct ReplicaConfig {
  std::optional<AcceleratorConfig> accelerator_config;
  std::string image_uri;
  std::vector<std::string> container_command;
  std::vector<std::string> container_args;
  std::optional<DiskConfig> disk_config;
  std::string tpu_tf_version;
};

struct LegacyScheduling {
  std::optional<std::chrono::milliseconds> max_running_time;
  std::optional<std::chrono::milliseconds> max_wait_time;
  int32_t priority = 0;
};

// GoogleCloudMlV1ParameterSpec.
enum class LegacyParameterType { kUnspecified = 0, kDouble, kInteger, kCategorical, kDiscrete };
enum class LegacyScaleType { kNone = 0, kLinear, kLog, kReverseLog };
struct LegacyParameterSpec {
  std::string parameter_name;
  LegacyParameterType type = LegacyParameterType::kUnspecified;
  double min_value = 0;
  double max_value = 0;
  std::vector<double> discrete_values;
  std::vector<std::string> categorical_values;
  LegacyScaleType scale_type = LegacyScaleType::kNone;
};

// GoogleCloudMlV1HyperparameterSpec.
enum class LegacyGoal { kUnspecified = 0, kMaximize, kMinimize };
enum class LegacyAlgorithm { kUnspecified = 0, kGridSearch, kRandomSearch, kPopulationBased };
struct LegacyHyperparameterSpec {
  LegacyGoal goal = LegacyGoal::kUnspecified;
  std::vector<LegacyParameterSpec> params;
  int32_t max_trials = 0;                 // 0 = AI Platform's default, 1
  int32_t max_parallel_trials = 0;        // 0 = 1
  int32_t max_failed_trials = 0;          // 0 = the service decides
  std::string hyperparameter_metric_tag;  // "" = "training/hptuning/metric"
  bool enable_trial_early_stopping = false;
  std::string resume_previous_job_id;
  LegacyAlgorithm algorithm = LegacyAlgorithm::kUnspecified;
};
inline constexpr std::string_view kDefaultHyperparameterMetricTag = "training/hptuning/metric";

// GoogleCloudMlV1TrainingInput (training fields only).
struct TrainingInput {
  std::optional<ScaleTier> scale_tier;  // unset: BASIC, as AI Platform defaults it
  std::string master_type;
  std::optional<ReplicaConfig> master_config;
  std::string worker_type;
  std::optional<ReplicaConfig> worker_config;
  int64_t worker_count = 0;
  std::string parameter_server_type;
  std::optional<ReplicaConfig> parameter_server_config;
  int64_t parameter_server_count = 0;
  std::string evaluator_type;
  std::optional<ReplicaConfig> evaluator_config;
  int64_t evaluator_count = 0;
  std::vector<std::string> package_uris;
  std::string python_module;
  std::vector<std::string> args;
  std::optional<LegacyHyperparameterSpec> hyperparameters;
  std::string region;
  std::string job_dir;
  std::string runtime_version;
  std::string python_version;
  std::optional<LegacyScheduling> scheduling;
  std::string service_account;
  bool use_chief_in_tf_config = false;
  bool enable_web_access = false;
};

// One HP trial as trainingOutput.trials[] shows it (GoogleCloudMlV1HyperparameterOutput).
struct LegacyTrialOutput {
  std::string trial_id;
  LegacyJobState state = LegacyJobState::kUnspecified;
  std::map<std::string, std::string> hyperparameters;  // values as text: "0.001"
  std::optional<int64_t> final_training_step;
  std::optional<double> final_objective_value;  // finalMetric is written when this is set
  std::optional<Timestamp> start_time;
  std::optional<Timestamp> end_time;
  bool is_trial_stopped_early = false;
};

// GoogleCloudMlV1TrainingOutput.
struct TrainingOutput {
  bool is_hyperparameter_tuning_job = false;
  int64_t completed_trial_count = 0;
  double consumed_ml_units = 0;
  std::string hyperparameter_metric_tag;
  std::vector<LegacyTrialOutput> trials;
};

struct LegacyJob {
  std::string job_id;
  std::map<std::string, std::string> labels;
  TrainingInput training_input;
  // Output only.
  LegacyJobState state = LegacyJobState::kUnspecified;
  std::optional<Timestamp> create_time, start_time, end_time;
  std::string error_message;
  std::string etag;  // base64, as the proto's bytes field: gcloud refuses anything else
  std::optional<TrainingOutput> training_output;
};

}  // namespace trainyard::spec
