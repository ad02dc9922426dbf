#include "spec/hyperparameter_tuning_job_validation.h"

#include "spec/custom_job_validation.h"
#include "tuning/study_spec_validate.h"

namespace trainyard::spec {
namespace {

Status ValidateCountLimits(const HyperparameterTuningJob& job) {
  if (job.max_trial_count > kMaxTrialCount) {
    return InvalidFieldError("maxTrialCount", "must be at most " + std::to_string(kMaxTrialCount) +
                                                  " (the trials one study may run), got " +
                                                  std::to_string(job.max_trial_count));
  }
  if (job.parallel_trial_count > job.max_trial_count) {
    return InvalidFieldError("parallelTrialCount", "must be at most maxTrialCount (" +
                                                       std::to_string(job.max_trial_count) +
                                                       "), got " +
                                                       std::to_string(job.parallel_trial_count));
  }
  if (job.max_failed_trial_count > job.max_trial_count) {
    return InvalidFieldError("maxFailedTrialCount", "must be at most maxTrialCount (" +
                                                        std::to_string(job.max_trial_count) +
                                                        "), got " +
                                                        std::to_string(job.max_failed_trial_count));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateHyperparameterTuningJob(const HyperparameterTuningJob& job) {
  TY_RETURN_IF_ERROR(tuning::ValidateHyperparameterTuningJobSpec(job.TuningSpec()));
  TY_RETURN_IF_ERROR(ValidateCountLimits(job));
  if (job.trial_job_spec.worker_pool_specs.empty()) {
    return InvalidArgumentError(
        "trialJobSpec: required; give the CustomJobSpec each trial runs, e.g. "
        "{\"workerPoolSpecs\": [{\"machineSpec\": {\"machineType\": \"n1-standard-4\"}, "
        "\"replicaCount\": 1, \"containerSpec\": {\"imageUri\": \"...\"}}]}");
  }
  TY_RETURN_IF_ERROR(ValidateCustomJobSpec(job.trial_job_spec, "trialJobSpec"));
  return ValidateLabels(job.labels, "labels");
}

}  // namespace trainyard::spec
