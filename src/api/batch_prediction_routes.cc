// batchPredictionJobs on the shared resource layer: the standard methods of a stored resource,
// with create and cancel from the BatchPredictionController (which runs the backing job). Create
// answers the job itself, not an operation (as Vertex's JobService.CreateBatchPredictionJob).
#include "api/routes.h"
#include "controller/batch_prediction_controller.h"
#include "spec/batch_prediction_job.h"

namespace trainyard::api {

ResourceDescriptor BatchPredictionJobsDescriptor() {
  ResourceDescriptor d;
  d.collection = std::string(spec::kBatchPredictionJobs);
  d.noun = "BatchPredictionJob";
  d.create_example =
      "{\"displayName\": \"...\", \"model\": \"projects/P/locations/L/models/M\", "
      "\"inputConfig\": {\"instancesFormat\": \"jsonl\", \"gcsSource\": {\"uris\": "
      "[\"gs://b/in.jsonl\"]}}, \"outputConfig\": {\"predictionsFormat\": \"jsonl\", "
      "\"gcsDestination\": {\"outputUriPrefix\": \"gs://b/out\"}}}";
  d.list_params = {"readMask"};
  return d;
}

ResourceHandlers BatchPredictionJobHandlers(controller::BatchPredictionController* jobs) {
  ResourceHandlers h = StoredResourceHandlers(&jobs->stored());
  h.create = [jobs](const CreateCall& call) {
    return jobs->Create(call.parent, call.body, call.creator);
  };
  h.cancel = [jobs](const ResourceId& id) { return jobs->Cancel(id.name); };
  return h;
}

}  // namespace trainyard::api
