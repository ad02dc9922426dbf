// Resource names (AIP-122), built and split in one place:
//   projects/{project}/locations/{location}                                    a LocationName
//   projects/{project}/locations/{location}/customJobs/{id}                    a ResourceName
//   projects/{project}/locations/{location}/hyperparameterTuningJobs/{id}
//   projects/{project}/locations/{location}/hyperparameterTuningJobs/{id}/trials/{trial}
// Every segment is non-empty, at most 128 characters of [A-Za-z0-9._~-] (URL-safe, so a name is
// also a URL path), and a project may also hold ':' (domain-scoped project ids such as
// "example.com:my-project").
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

namespace trainyard::spec {

// The collections Trainyard serves under a location, and the trials of a tuning job.
inline constexpr std::string_view kCustomJobs = "customJobs";
inline constexpr std::string_view kHyperparameterTuningJobs = "hyperparameterTuningJobs";
inline constexpr std::string_view kTrials = "trials";

struct LocationName {
  std::string project;
  std::string location;

  // "projects/{project}/locations/{location}" (segments are not checked; Parse checks).
  std::string ToString() const;
  // INVALID_ARGUMENT naming the text and the expected form, or the bad segment.
  static StatusOr<LocationName> Parse(std::string_view text);
};

struct ResourceName {
  LocationName location;
  std::string collection;  // kCustomJobs or kHyperparameterTuningJobs
  std::string id;
  std::string trial_id;  // set only for a trial of a hyperparameterTuningJobs resource

  // The full name, e.g. "projects/p/locations/l/customJobs/42".
  std::string ToString() const;
  // "projects/{project}/locations/{location}".
  std::string Parent() const { return location.ToString(); }

  // The resource `id` in `collection` under `location` (segments are not checked; Parse checks).
  static ResourceName Of(LocationName location, std::string_view collection, std::string id) {
    return {std::move(location), std::string(collection), std::move(id), ""};
  }

  // Parses a name in `collection` (kCustomJobs, kHyperparameterTuningJobs), or a trial name when
  // `collection` is kTrials. INVALID_ARGUMENT naming the text and the expected form, or the bad
  // segment, otherwise.
  static StatusOr<ResourceName> Parse(std::string_view text, std::string_view collection);
};

// Checks one segment (see the top of this file); `what` names it in the error ("project").
Status ValidateNameSegment(std::string_view what, std::string_view segment);

// The id at the end of a name ("42" for ".../customJobs/42"); the whole text if it has no '/'.
std::string_view LastSegment(std::string_view name);

}  // namespace trainyard::spec
