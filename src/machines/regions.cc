#include "machines/regions.h"

#include <algorithm>

#include "common/nearest_name.h"

namespace trainyard::machines {

const std::vector<std::string>& KnownRegions() {
  static const std::vector<std::string> regions = {"africa-south1",
                                                   "asia-east1",
                                                   "asia-east2",
                                                   "asia-northeast1",
                                                   "asia-northeast2",
                                                   "asia-northeast3",
                                                   "asia-south1",
                                                   "asia-southeast1",
                                                   "asia-southeast2",
                                                   "australia-southeast1",
                                                   "australia-southeast2",
                                                   "europe-central2",
                                                   "europe-north1",
                                                   "europe-southwest1",
                                                   "europe-west1",
                                                   "europe-west2",
                                                   "europe-west3",
                                                   "europe-west4",
                                                   "europe-west6",
                                                   "europe-west8",
                                                   "europe-west9",
                                                   "europe-west12",
                                                   "me-central1",
                                                   "me-central2",
                                                   "me-west1",
                                                   "northamerica-northeast1",
                                                   "northamerica-northeast2",
                                                   "southamerica-east1",
                                                   "southamerica-west1",
                                                   "us-central1",
                                                   "us-east1",
                                                   "us-east4",
                                                   "us-east5",
                                                   "us-south1",
                                                   "us-west1",
                                                   "us-west2",
                                                   "us-west3",
                                                   "us-west4",
                                                   "local"};
  return regions;
}

bool IsKnownRegion(const std::string& region) {
  const auto& known = KnownRegions();
  return std::find(known.begin(), known.end(), region) != known.end();
}

Status CheckRegion(const std::string& field, const std::string& region) {
  if (IsKnownRegion(region)) return Status::Ok();
  const std::string nearest = NearestName(region, KnownRegions());
  const std::string hint = nearest.empty() ? "" : "did you mean '" + nearest + "'? ";
  return InvalidFieldError(field, "'" + region + "' is not a region Trainyard knows; " + hint +
                                      "(Vertex AI's training regions, or 'local')");
}

}  // namespace trainyard::machines
