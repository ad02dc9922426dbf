// Semantic checks of a HyperparameterTuningJob from a create request, after decoding
// (hyperparameter_tuning_job_json.h). Every error is INVALID_ARGUMENT and starts with the field
// path, then says the fix, e.g.
//   studySpec.parameters[0].doubleValueSpec.minValue: ...
//   trialJobSpec.workerPoolSpecs[0].replicaCount: the primary pool ... must have exactly 1 replica
#pragma once

#include "common/status.h"
#include "spec/hyperparameter_tuning_job.h"

namespace trainyard::spec {

// In this order, first error wins: the study (tuning::ValidateHyperparameterTuningJobSpec:
// displayName, counts, studySpec), trialJobSpec present and valid (ValidateCustomJobSpec), labels.
Status ValidateHyperparameterTuningJob(const HyperparameterTuningJob& job);

}  // namespace trainyard::spec
