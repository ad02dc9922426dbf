// The one translation between AI Platform Training's TrainingInput (legacy_job.h) and the engine
// that runs Vertex jobs: a legacy job runs as one CustomJob, or — with `hyperparameters` — as one
// HyperparameterTuningJob whose trials are such CustomJobs, in location trainingInput.region.
//
//   masterType/Config                    -> workerPoolSpecs[0] (1 replica)
//   workerCount/Type/Config              -> workerPoolSpecs[1]
//   parameterServerCount/Type/Config     -> workerPoolSpecs[2]
//   evaluatorCount/Type/Config           -> workerPoolSpecs[3]
//   scaleTier BASIC|BASIC_GPU|STANDARD_1|PREMIUM_1 -> the tier's machines and counts
//            (legacy_machines.h); CUSTOM -> the request's; BASIC_TPU, cloud_tpu, TPU_* -> 400
//   legacy machine names (standard_gpu, ...) -> Compute Engine type + GPUs; others as they are
//   ReplicaConfig.acceleratorConfig -> machineSpec.acceleratorType/Count; diskConfig -> diskSpec
//   ReplicaConfig.imageUri (a group without one uses masterConfig's image, as AI Platform does,
//            and its containerCommand/Args unless the group has its own) ->
//            containerSpec{imageUri, command: containerCommand, args: containerArgs + args}
//   packageUris + pythonModule -> pythonPackageSpec{executorImageUri: the group's imageUri, else
//            ExecutorImageForRuntime(runtimeVersion, pythonVersion), packageUris, pythonModule,
//            args}
//   jobDir   -> "--job-dir=<jobDir>" after the args, and baseOutputDirectory
//   scheduling.maxRunningTime -> scheduling.timeout; maxWaitTime -> maxWaitDuration
//   serviceAccount -> serviceAccount (the replicas' Unix user: controller/replica_users.h)
//   TF_CONFIG's pool 0 -> "master", or "chief" with useChiefInTfConfig or a 2.x runtime
//            (CustomJobSpec::tf_config_primary_role)
//   hyperparameters -> studySpec {metrics: [{hyperparameterMetricTag, goal}], parameters by
//            type, algorithm (unspecified = Bayesian), enableTrialEarlyStopping -> median
//            stopping}, maxTrials/maxParallelTrials/maxFailedTrials -> the job's counts
//
// Every error is INVALID_ARGUMENT naming the trainingInput field and the fix.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "spec/custom_job.h"
#include "spec/hyperparameter_tuning_job.h"
#include "spec/legacy_job.h"

namespace trainyard::spec {

// What a legacy job runs as. `tuning` is set when the input has hyperparameters; its
// trial_job_spec is `job_spec`.
struct LegacyBacking {
  CustomJobSpec job_spec;
  std::optional<HyperparameterTuningJob> tuning;
};
StatusOr<LegacyBacking> TranslateTrainingInput(const TrainingInput& input);

// The executor image of a package job without an image: AI Platform runtime versions 1.15 and
// 2.1..2.11 with Python 3 run in Vertex's prebuilt PyTorch training image (GPU variant when
// `gpu`), which Trainyard runs as trainyard/pytorch (or host python3: image_catalog.h).
// INVALID_ARGUMENT naming runtimeVersion / pythonVersion for others.
StatusOr<std::string> ExecutorImageForRuntime(const std::string& runtime_version,
                                              const std::string& python_version, bool gpu);

// AI Platform's task names: "master-replica-0", "worker-replica-2", "ps-replica-0",
// "evaluator-replica-0" (pools 0..3), as its logs and `--task-name` use them.
std::string LegacyTaskName(int pool_index, int replica_index);

// trainingOutput of a legacy HP job from its tuning job: every trial with its hyperparameters as
// text, its final metric and times; completedTrialCount counts the trials that ended.
TrainingOutput TrainingOutputOf(const HyperparameterTuningJob& tuning);

}  // namespace trainyard::spec
