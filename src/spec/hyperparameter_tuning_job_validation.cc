#include "spec/hyperparameter_tuning_job_validation.h"

#include "spec/custom_job_validation.h"
#include "tuning/study_spec_validate.h"

namespace trainyard::spec {

Status ValidateHyperparameterTuningJob(const HyperparameterTuningJob& job) {
  TY_RETURN_IF_ERROR(tuning::ValidateHyperparameterTuningJobSpec(job.TuningSpec()));
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
