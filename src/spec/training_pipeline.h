// TrainingPipeline: the Vertex AI TrainingPipeline resource
// (google/cloud/aiplatform/v1/training_pipeline.proto) for the one task definition Trainyard runs,
// the custom task: its trainingTaskInputs are a CustomJobSpec, which the pipeline runs as one
// backing CustomJob, and on success the Model in modelToUpload is registered.
//
// The pipeline is kept in its proto3-JSON form. trainingTaskInputs is a google.protobuf.Value and
// is stored and echoed exactly as sent: the Python SDK writes snake_case keys with a camelCase
// containerSpec inside and integers as 1.0, and reads its own keys back (enable_web_access,
// tensorboard), so it is never normalised; TrainingTaskSpec decodes it, in any of those spellings,
// for the job.
//
//   TrainingPipeline {displayName (required), trainingTaskDefinition (required: the custom task),
//                     trainingTaskInputs (required: a CustomJobSpec), modelToUpload (a Model,
//                     model.h; its displayName defaults to the pipeline's), modelId, parentModel,
//                     labels; output only: name, state, trainingTaskMetadata{backingCustomJob},
//                     error, createTime, startTime, endTime, updateTime}
// inputDataConfig (Vertex datasets) and encryptionSpec are refused with a field error.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"
#include "spec/custom_job.h"

namespace trainyard::spec {

inline constexpr std::string_view kTrainingPipelines = "trainingPipelines";
// python-aiplatform schema.training_job.definition.custom_task.
inline constexpr std::string_view kCustomTaskDefinition =
    "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml";

// google.cloud.aiplatform.v1.PipelineState names, by number (0..8): "PIPELINE_STATE_QUEUED" = 1.
std::string_view PipelineStateName(int number);
// The number of a PipelineState name; -1 for an unknown one.
int ParsePipelineState(std::string_view name);
// The pipeline state that mirrors a backing job's state (JOB_STATE_X -> PIPELINE_STATE_X; the
// job-only states EXPIRED and PARTIALLY_SUCCEEDED -> FAILED, UPDATING -> RUNNING).
std::string_view PipelineStateOfJob(JobState state);

// Decodes a create request body into the pipeline to store (the fields listed above, output-only
// ones dropped). INVALID_ARGUMENT with the field path: unknown fields, a missing required field,
// another task definition (naming the schema), trainingTaskInputs that are not a valid
// CustomJobSpec (TrainingTaskSpec + ValidateCustomJobSpec), a bad modelToUpload, modelId or
// labels.
StatusOr<nlohmann::json> DecodeTrainingPipeline(std::string_view body);

// The CustomJobSpec in a decoded pipeline's trainingTaskInputs (lowerCamelCase, snake_case or
// both mixed; integral numbers as 1.0; null = unset). INVALID_ARGUMENT with paths under
// "trainingTaskInputs".
StatusOr<CustomJobSpec> TrainingTaskSpec(const nlohmann::json& pipeline);

}  // namespace trainyard::spec
