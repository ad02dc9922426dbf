// Vertex AI services Trainyard does not serve, known by the collection their REST paths name, so
// a client that calls one (the SDK's aiplatform.init(experiment=...) creates a metadataStore)
// hears "not supported by Trainyard" rather than a bare 404 it cannot act on.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainyard::api {

// For /v1[beta1]/projects/P/locations/L/COLLECTION[/...] whose COLLECTION belongs to a Vertex AI
// service Trainyard lacks: the service and what in the SDK reaches it ("Vertex ML Metadata
// (Experiments: aiplatform.init(experiment=...), start_run, log_metrics)"); nullopt otherwise.
std::optional<std::string> UnsupportedVertexService(std::string_view path);

}  // namespace trainyard::api
