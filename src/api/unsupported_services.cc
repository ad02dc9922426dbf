#include "api/unsupported_services.h"

#include <map>

namespace trainyard::api {

std::optional<std::string> UnsupportedVertexService(std::string_view path) {
  static const std::map<std::string, std::string, std::less<>> kServices = {
      {"metadataStores",
       "Vertex ML Metadata (Experiments: aiplatform.init(experiment=...), start_run, log_metrics)"},
      {"tensorboards", "Vertex AI TensorBoard instances (the SDK's tensorboard= argument)"},
      {"endpoints", "Vertex AI endpoints (online prediction)"},
      {"datasets", "Vertex AI managed datasets"},
      {"pipelineJobs", "Vertex AI Pipelines (PipelineJob)"},
      {"schedules", "Vertex AI schedules"},
      {"featurestores", "Vertex AI Feature Store"},
      {"featureOnlineStores", "Vertex AI Feature Store"},
      {"featureGroups", "Vertex AI Feature Store"},
      {"indexes", "Vertex AI Vector Search"},
      {"indexEndpoints", "Vertex AI Vector Search"},
      {"persistentResources", "Vertex AI persistent resources"},
      {"nasJobs", "Vertex AI Neural Architecture Search"},
      {"studies", "the Vertex AI Vizier service (HyperparameterTuningJob is served)"},
      {"modelDeploymentMonitoringJobs", "Vertex AI Model Monitoring"},
      {"dataLabelingJobs", "Vertex AI data labeling"},
      {"notebookRuntimes", "Colab Enterprise runtimes"},
      {"tuningJobs", "Vertex AI generative model tuning"},
  };
  // /v1/projects/P/locations/L/COLLECTION...
  std::string_view rest = path;
  for (std::string_view version : {"/v1beta1/", "/v1/"}) {
    if (rest.starts_with(version)) {
      rest.remove_prefix(version.size());
      break;
    }
  }
  if (rest.size() == path.size()) return std::nullopt;
  for (std::string_view part : {"projects", "", "locations", ""}) {
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    if (!part.empty() && rest.substr(0, slash) != part) return std::nullopt;
    rest.remove_prefix(slash + 1);
  }
  const std::string_view collection = rest.substr(0, rest.find_first_of("/:?"));
  const auto it = kServices.find(collection);
  if (it == kServices.end()) return std::nullopt;
  return it->second;
}

}  // namespace trainyard::api
