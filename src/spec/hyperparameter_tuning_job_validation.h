// Semantic checks of a HyperparameterTuningJob from a create request, after decoding
// (hyperparameter_tuning_job_json.h). Every error is INVALID_ARGUMENT and starts with the field
// path, then says the fix, e.g.
//   studySpec.parameters[0].doubleValueSpec.minValue: ...
//   trialJobSpec.workerPoolSpecs[0].replicaCount: the primary pool ... must have exactly 1 replica
#pragma once

#include "common/status.h"
#include "spec/hyperparameter_tuning_job.h"

namespace trainyard::spec {

// The most trials one study may create: AI Platform Vizier's documented "maximum number of
// trials in a study" (1,000). It bounds everything a study costs the server: its stored trials,
// the searcher's history, and how long a study whose every trial fails keeps starting new ones.
inline constexpr int kMaxTrialCount = 1000;

// In this order, first error wins: the study (tuning::ValidateHyperparameterTuningJobSpec:
// displayName, counts, studySpec), the counts' limits (maxTrialCount <= kMaxTrialCount;
// parallelTrialCount and maxFailedTrialCount <= maxTrialCount: more could never be used),
// trialJobSpec present and valid (ValidateCustomJobSpec), labels. Create-time only: a stored
// study is restored whatever its counts (a row written before the limits still loads, and can be
// cancelled). Whether a trial's job could start (image catalog, executor) is the controller's
// check: JobController::Validate.
Status ValidateHyperparameterTuningJob(const HyperparameterTuningJob& job);

}  // namespace trainyard::spec
