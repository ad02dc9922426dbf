#include "protojson/parse.h"
#include "protojson/reader.h"
#include "protojson/writer.h"
#include "spec/custom_job_json.h"
#include "spec/custom_job_validation.h"
#include "spec/model.h"
#include "spec/training_pipeline.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;
using Fields = protojson::ObjectReader;

constexpr std::string_view kPipelineStates[] = {
    "PIPELINE_STATE_UNSPECIFIED", "PIPELINE_STATE_QUEUED",    "PIPELINE_STATE_PENDING",
    "PIPELINE_STATE_RUNNING",     "PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED",
    "PIPELINE_STATE_CANCELLING",  "PIPELINE_STATE_CANCELLED", "PIPELINE_STATE_PAUSED"};

Status CheckTaskDefinition(const Fields& f) {
  std::string definition;
  TY_RETURN_IF_ERROR(f.String("trainingTaskDefinition", &definition));
  if (definition == kCustomTaskDefinition) return Status::Ok();
  return protojson::FieldError("trainingTaskDefinition",
                               "the schema '" + definition.substr(0, 300) +
                                   "' is not supported: Trainyard runs only the custom task " +
                                   std::string(kCustomTaskDefinition) +
                                   " (aiplatform.CustomTrainingJob, CustomContainerTrainingJob, "
                                   "CustomPythonPackageTrainingJob)");
}

// modelToUpload, its displayName defaulting to the pipeline's (as the SDK's "<name>-model" would).
StatusOr<json> DecodeModelToUpload(const Fields& f, const std::string& display_name) {
  json model = *f.Get("modelToUpload");
  if (model.is_object() && (!model.contains("displayName") || model["displayName"].is_null()) &&
      !model.contains("display_name")) {
    model["displayName"] = display_name;
  }
  return DecodeModel(model, "modelToUpload");
}

}  // namespace

std::string_view PipelineStateName(int number) {
  if (number < 0 || number >= static_cast<int>(std::size(kPipelineStates))) return "";
  return kPipelineStates[number];
}

int ParsePipelineState(std::string_view name) {
  for (size_t i = 0; i < std::size(kPipelineStates); ++i) {
    if (kPipelineStates[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string_view PipelineStateOfJob(JobState state) {
  switch (state) {
    case JobState::kExpired:
    case JobState::kPartiallySucceeded:
      return "PIPELINE_STATE_FAILED";
    case JobState::kUpdating:
      return "PIPELINE_STATE_RUNNING";
    default:
      // JobState and PipelineState share the numbers 0..8.
      return PipelineStateName(static_cast<int>(state));
  }
}

StatusOr<json> DecodeTrainingPipeline(std::string_view body) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
  TY_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Open(j, "",
                   {"displayName", "trainingTaskDefinition", "trainingTaskInputs", "modelToUpload",
                    "modelId", "parentModel", "labels", "inputDataConfig", "encryptionSpec"},
                   {"name", "state", "trainingTaskMetadata", "error", "createTime", "startTime",
                    "endTime", "updateTime", "trainyardInfo"},
                   "trainingPipeline"));
  TY_RETURN_IF_ERROR(f.Require("displayName"));
  TY_RETURN_IF_ERROR(f.Require("trainingTaskDefinition", std::string(kCustomTaskDefinition)));
  TY_RETURN_IF_ERROR(
      f.Require("trainingTaskInputs", "a CustomJobSpec: {\"workerPoolSpecs\": [...]}"));
  TY_RETURN_IF_ERROR(f.RejectIfSet(
      "inputDataConfig", "Vertex datasets are not served; read your data from gs:// in the job"));
  TY_RETURN_IF_ERROR(f.RejectIfSet("encryptionSpec", "remove it (no customer-managed keys)"));
  TY_RETURN_IF_ERROR(CheckTaskDefinition(f));
  json out = json::object();
  std::string display_name, model_id, parent_model;
  std::map<std::string, std::string> labels;
  TY_RETURN_IF_ERROR(f.String("displayName", &display_name));
  if (Utf8Length(display_name) > kMaxDisplayNameChars) {
    return protojson::FieldError("displayName", "at most 128 characters");
  }
  TY_RETURN_IF_ERROR(f.String("modelId", &model_id));
  TY_RETURN_IF_ERROR(f.String("parentModel", &parent_model));
  TY_RETURN_IF_ERROR(f.StringMap("labels", &labels));
  TY_RETURN_IF_ERROR(ValidateLabels(labels, "labels"));
  if (!model_id.empty()) TY_RETURN_IF_ERROR(CheckModelId("modelId", model_id));
  out["displayName"] = display_name;
  out["trainingTaskDefinition"] = std::string(kCustomTaskDefinition);
  out["trainingTaskInputs"] = *f.Get("trainingTaskInputs");
  TY_ASSIGN_OR_RETURN(CustomJobSpec spec, TrainingTaskSpec(out));
  TY_RETURN_IF_ERROR(ValidateCustomJobSpec(spec, "trainingTaskInputs"));
  if (f.Has("modelToUpload")) {
    TY_ASSIGN_OR_RETURN(out["modelToUpload"], DecodeModelToUpload(f, display_name));
  }
  if (!model_id.empty()) out["modelId"] = model_id;
  if (!parent_model.empty()) out["parentModel"] = parent_model;
  if (!labels.empty()) out["labels"] = labels;
  return out;
}

StatusOr<CustomJobSpec> TrainingTaskSpec(const json& pipeline) {
  const auto it = pipeline.find("trainingTaskInputs");
  if (it == pipeline.end() || it->is_null()) {
    return protojson::FieldError("trainingTaskInputs", "required");
  }
  return CustomJobSpecFromJson(*it, "trainingTaskInputs");
}

}  // namespace trainyard::spec
