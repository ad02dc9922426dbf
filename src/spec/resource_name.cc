#include "spec/resource_name.h"

#include <vector>

namespace trainyard::spec {
namespace {

constexpr size_t kMaxSegment = 128;

std::vector<std::string_view> Split(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (true) {
    size_t slash = text.find('/', pos);
    parts.push_back(text.substr(pos, slash == std::string_view::npos ? slash : slash - pos));
    if (slash == std::string_view::npos) return parts;
    pos = slash + 1;
  }
}

std::string Pattern(std::string_view collection) {
  if (collection == kTrials) {
    return "projects/PROJECT/locations/LOCATION/hyperparameterTuningJobs/ID/trials/TRIAL";
  }
  return "projects/PROJECT/locations/LOCATION/" + std::string(collection) + "/ID";
}

Status NotAName(std::string_view text, std::string_view what, const std::string& pattern) {
  return InvalidArgumentError("'" + std::string(text) + "' is not a " + std::string(what) +
                              " name; expected " + pattern);
}

}  // namespace

Status ValidateNameSegment(std::string_view what, std::string_view segment) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError(std::string(what) + " '" + std::string(segment) +
                                "' in a resource " + "name " + std::string(why));
  };
  if (segment.empty()) return bad("is empty");
  if (segment.size() > kMaxSegment) return bad("is longer than 128 characters");
  for (char c : segment) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == '~' || (c == ':' && what == "project");
    if (!ok) return bad("may hold only letters, digits and - _ . ~");
  }
  return Status::Ok();
}

std::string LocationName::ToString() const {
  return "projects/" + project + "/locations/" + location;
}

StatusOr<LocationName> LocationName::Parse(std::string_view text) {
  std::vector<std::string_view> p = Split(text);
  if (p.size() != 4 || p[0] != "projects" || p[2] != "locations") {
    return NotAName(text, "location", "projects/PROJECT/locations/LOCATION");
  }
  TY_RETURN_IF_ERROR(ValidateNameSegment("project", p[1]));
  TY_RETURN_IF_ERROR(ValidateNameSegment("location", p[3]));
  return LocationName{std::string(p[1]), std::string(p[3])};
}

std::string ResourceName::ToString() const {
  std::string name = location.ToString() + "/" + collection + "/" + id;
  if (!trial_id.empty()) name += "/" + std::string(kTrials) + "/" + trial_id;
  return name;
}

StatusOr<ResourceName> ResourceName::Parse(std::string_view text, std::string_view collection) {
  const bool trial = collection == kTrials;
  const std::string_view parent_collection = trial ? kHyperparameterTuningJobs : collection;
  const std::string_view what = trial                       ? "trial"
                                : collection == kCustomJobs ? "custom job"
                                                            : "hyperparameter tuning job";
  std::vector<std::string_view> p = Split(text);
  if (p.size() != (trial ? 8u : 6u) || p[0] != "projects" || p[2] != "locations" ||
      p[4] != parent_collection || (trial && p[6] != kTrials)) {
    return NotAName(text, what, Pattern(collection));
  }
  ResourceName name;
  name.location = {std::string(p[1]), std::string(p[3])};
  name.collection = std::string(parent_collection);
  name.id = std::string(p[5]);
  TY_RETURN_IF_ERROR(ValidateNameSegment("project", p[1]));
  TY_RETURN_IF_ERROR(ValidateNameSegment("location", p[3]));
  TY_RETURN_IF_ERROR(ValidateNameSegment("id", p[5]));
  if (trial) {
    name.trial_id = std::string(p[7]);
    TY_RETURN_IF_ERROR(ValidateNameSegment("trial id", p[7]));
  }
  return name;
}

std::string_view LastSegment(std::string_view name) {
  size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

}  // namespace trainyard::spec
