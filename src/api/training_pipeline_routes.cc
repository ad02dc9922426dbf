// trainingPipelines on the shared resource layer: the standard methods of a stored resource, with
// create and cancel from the TrainingPipelineController (which runs the backing job).
#include "api/routes.h"
#include "controller/training_pipeline_controller.h"
#include "spec/training_pipeline.h"

namespace trainyard::api {

ResourceDescriptor TrainingPipelinesDescriptor() {
  ResourceDescriptor d;
  d.collection = std::string(spec::kTrainingPipelines);
  d.noun = "TrainingPipeline";
  d.create_example = "{\"displayName\": \"...\", \"trainingTaskDefinition\": \"" +
                     std::string(spec::kCustomTaskDefinition) +
                     "\", \"trainingTaskInputs\": {\"workerPoolSpecs\": [...]}}";
  d.list_params = {"readMask"};
  return d;
}

ResourceHandlers TrainingPipelineHandlers(controller::TrainingPipelineController* pipelines) {
  ResourceHandlers h = StoredResourceHandlers(&pipelines->stored());
  h.create = [pipelines](const CreateCall& call) {
    return pipelines->Create(call.parent, call.body, call.creator);
  };
  h.cancel = [pipelines](const ResourceId& id) { return pipelines->Cancel(id.name); };
  return h;
}

}  // namespace trainyard::api
