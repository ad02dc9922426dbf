// HyperparameterTuningJob: the Vertex AI resource (google/cloud/aiplatform/v1/
// hyperparameter_tuning_job.proto) as a plain struct, next to CustomJob and in the same shape:
// output-only fields first, then the request's fields. The study's own types (StudySpec, Trial,
// Measurement) are the tuning core's (src/tuning/study_spec.h); the trials' job is a typed
// CustomJobSpec. The JSON mapping is in hyperparameter_tuning_job_json.h and the semantic checks
// in hyperparameter_tuning_job_validation.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spec/custom_job.h"
#include "tuning/study_spec.h"

namespace trainyard::spec {

struct HyperparameterTuningJob {
  // Output only. `state` is the JobState of a CustomJob: PENDING until the first trial starts,
  // RUNNING, then SUCCEEDED / FAILED / CANCELLING / CANCELLED.
  std::string name;  // projects/{project}/locations/{location}/hyperparameterTuningJobs/{id}
  JobState state = JobState::kUnspecified;
  std::optional<Timestamp> create_time;
  std::optional<Timestamp> start_time;  // the first trial's start
  std::optional<Timestamp> end_time;
  std::optional<Timestamp> update_time;
  std::optional<RpcStatus> error;
  std::vector<tuning::Trial> trials;
  // Who created it (JSON trainyardInfo.creator, creator.h); its trials' jobs get the same.
  std::optional<Creator> creator;
  // Input.
  std::string display_name;
  tuning::StudySpec study_spec;
  int32_t max_trial_count = 0;
  int32_t parallel_trial_count = 0;
  int32_t max_failed_trial_count = 0;  // 0: the service decides
  CustomJobSpec trial_job_spec;
  std::map<std::string, std::string> labels;

  // The last segment of `name` ("" when unnamed).
  std::string Id() const;
  // The part the tuning core runs (tuning::StudyRunner); trialJobSpec travels as its JSON.
  tuning::HyperparameterTuningJobSpec TuningSpec() const;
};

}  // namespace trainyard::spec
