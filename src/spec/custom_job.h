// CustomJob: the Vertex AI CustomJob resource (google/cloud/aiplatform/v1/custom_job.proto) as
// plain C++ structs, in our own clean-room definition. Field names mirror the proto; the JSON
// mapping (lowerCamelCase, proto3 style) lives in custom_job_json.h and the semantic checks in
// custom_job_validation.h. These structs carry no behaviour beyond small helpers.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spec/creator.h"

namespace trainyard::protojson {
template <typename E>
struct EnumType;  // protojson/reader.h
}  // namespace trainyard::protojson

namespace trainyard::spec {

using Timestamp = std::chrono::system_clock::time_point;  // == trainyard::TimePoint

// google.cloud.aiplatform.v1.JobState; numeric values match the proto enum.
enum class JobState {
  kUnspecified = 0,
  kQueued = 1,
  kPending = 2,
  kRunning = 3,
  kSucceeded = 4,
  kFailed = 5,
  kCancelling = 6,
  kCancelled = 7,
  kPaused = 8,
  kExpired = 9,
  kUpdating = 10,
  kPartiallySucceeded = 11,
};

// The proto enum's names and numbers, for the JSON codec.
const protojson::EnumType<JobState>& JobStateType();
// "JOB_STATE_RUNNING", ...
std::string_view JobStateName(JobState state);
// Inverse of JobStateName; nullopt for unknown names.
std::optional<JobState> ParseJobState(std::string_view name);
// SUCCEEDED, FAILED, CANCELLED, EXPIRED, PARTIALLY_SUCCEEDED: the job will not change any more.
bool IsTerminal(JobState state);

struct EnvVar {
  std::string name;
  std::string value;
};

struct MachineSpec {
  std::string machine_type;
  std::string accelerator_type;  // "" = ACCELERATOR_TYPE_UNSPECIFIED
  int32_t accelerator_count = 0;
};

struct DiskSpec {
  std::string boot_disk_type;     // "" = default (pd-ssd)
  int32_t boot_disk_size_gb = 0;  // 0 = default (100)
};

struct ContainerSpec {
  std::string image_uri;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
};

struct PythonPackageSpec {
  std::string executor_image_uri;
  std::vector<std::string> package_uris;
  std::string python_module;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
};

struct WorkerPoolSpec {
  // The oneof `task`: at most one is set. A pool with neither and no machine spec is "empty",
  // which Vertex allows for pools 1..3 ("can be skipped by providing an empty value").
  std::optional<ContainerSpec> container_spec;
  std::optional<PythonPackageSpec> python_package_spec;
  std::optional<MachineSpec> machine_spec;
  int64_t replica_count = 0;
  std::optional<DiskSpec> disk_spec;

  bool IsEmpty() const {
    return !container_spec && !python_package_spec && !machine_spec && replica_count == 0 &&
           !disk_spec;
  }
};

struct Scheduling {
  std::optional<std::chrono::milliseconds> timeout;  // default 7 days when unset
  bool restart_job_on_worker_restart = false;
  std::string strategy;  // "" = STRATEGY_UNSPECIFIED; one of SchedulingStrategies()
  bool disable_retries = false;
  std::optional<std::chrono::milliseconds> max_wait_duration;
};

struct SchedulingStrategy {
  std::string_view name;  // "SPOT"
  int number;             // in google.cloud.aiplatform.v1.Scheduling.Strategy
};
// Every Scheduling.Strategy a spec may name (Trainyard runs them all on demand).
std::span<const SchedulingStrategy> SchedulingStrategies();

struct CustomJobSpec {
  std::vector<WorkerPoolSpec> worker_pool_specs;
  std::optional<Scheduling> scheduling;
  std::string service_account;
  std::string network;
  std::string base_output_directory;  // baseOutputDirectory.outputUriPrefix
  std::string tensorboard;
  bool enable_web_access = false;
  bool enable_dashboard_access = false;
  std::string experiment;
  std::string experiment_run;
  std::string persistent_resource_id;
  // Trainyard extension (JSON "trainyardTfConfigPrimaryRole"): the name TF_CONFIG gives pool 0,
  // "chief" (Vertex; "" means it too) or "master" (AI Platform Training's for custom containers
  // and 1.x runtimes, which legacy jobs ask for: spec/legacy_translation.h).
  std::string tf_config_primary_role;
};

// google.rpc.Status as stored on a job (code is a google.rpc.Code value).
struct RpcStatus {
  int code = 0;
  std::string message;
};

// Trainyard's output-only extension (JSON key "trainyardInfo"): what Vertex shows in its console
// but not in the resource. Ignored on input.
struct ReplicaInfo {
  int pool_index = 0;
  int replica_index = 0;
  std::optional<int> exit_code;
  int restarts = 0;
};
// One step of the job's timeline: a state it entered, or a restart while RUNNING (same state,
// detail says which replica and why).
struct StateChange {
  JobState state = JobState::kUnspecified;
  Timestamp time;
  std::string detail;
};
struct TrainyardInfo {
  double hourly_cost_usd = 0;     // sum over replicas of machine + accelerator prices
  double estimated_cost_usd = 0;  // hourly_cost_usd x run time (start..end, or ..now)
  std::vector<ReplicaInfo> replicas;
  // Oldest first; at most kMaxStateHistory entries (the first one and the latest ones are kept).
  std::vector<StateChange> state_history;
  // Who created the job (creator.h): its API caller, or the caller who created the HP-tuning
  // job, pipeline or AI Platform job that started it. Set once at create; none for jobs stored
  // before creators were recorded.
  std::optional<Creator> creator;
  // Steps RecordStateChange appended to this object (never stored or sent): a writer compares it
  // before and after a change to find the steps it added, which are the last ones of
  // state_history (the cap drops old ones).
  int64_t steps_appended = 0;
};
inline constexpr size_t kMaxStateHistory = 100;

// Appends a step to job.trainyard_info's state_history unless it repeats the last one (same
// state, no detail), dropping the second-oldest entry beyond kMaxStateHistory.
struct CustomJob;
void RecordStateChange(CustomJob& job, JobState state, Timestamp time, std::string detail = "");

struct CustomJob {
  // Output only.
  std::string name;  // projects/{project}/locations/{location}/customJobs/{id}
  JobState state = JobState::kUnspecified;
  std::optional<Timestamp> create_time;
  std::optional<Timestamp> start_time;
  std::optional<Timestamp> end_time;
  std::optional<Timestamp> update_time;
  std::optional<RpcStatus> error;
  std::optional<TrainyardInfo> trainyard_info;
  // Input.
  std::string display_name;
  CustomJobSpec job_spec;
  std::map<std::string, std::string> labels;

  // The last segment of `name` ("" when unnamed).
  std::string Id() const;
};

}  // namespace trainyard::spec
