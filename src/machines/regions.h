// The regions a Vertex parent's `locations/{L}` and AI Platform's `trainingInput.region` may
// name: Vertex AI's training regions (the list gcloud's `ai` commands offer,
// SUPPORTED_TRAINING_REGIONS) and "local", Trainyard's own name for "this host". A typo such as
// "us-centrall" would otherwise make a location of its own whose jobs no other command finds.
// No state; depends on common only.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::machines {

// In gcloud's order (alphabetical), then "local".
const std::vector<std::string>& KnownRegions();
bool IsKnownRegion(const std::string& region);

// INVALID_ARGUMENT when `region` is not known: "<field>: 'us-centrall' is not a region Trainyard
// knows; did you mean 'us-central1'? (Vertex AI's training regions, or 'local')", with a field
// violation on `field` ("parent", "trainingInput.region", "--region").
Status CheckRegion(const std::string& field, const std::string& region);

}  // namespace trainyard::machines
