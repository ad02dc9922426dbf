// A job's scheduling priority (docs/operations.md "Priorities"): which of a project's waiting jobs
// goes first. Vertex has no such field, so a Vertex job states it with one label:
//   labels: {"trainyard-priority": "500"}   an integer from 0 to 1000; higher goes first
// AI Platform's legacy jobs have trainingInput.scheduling.priority (the same range), which their
// backing job carries as that label; a tuning job's label reaches each trial, a training
// pipeline's its backing job. No label = priority 0.
//
// Priority orders a project's own jobs only (quota holds and the executor's queue); between
// projects the fair share decides (local_executor/gang_scheduler.h).
#pragma once

#include <map>
#include <string>

#include "common/status.h"

namespace trainyard::spec {

inline constexpr char kPriorityLabel[] = "trainyard-priority";
inline constexpr int kMinPriority = 0;
inline constexpr int kMaxPriority = 1000;

// The priority the labels state: 0 without kPriorityLabel. INVALID_ARGUMENT naming
// `path`.trainyard-priority for a value that is not an integer from 0 to 1000.
StatusOr<int> PriorityFromLabels(const std::map<std::string, std::string>& labels,
                                 const std::string& path = "labels");

// The error for a priority outside 0..1000 (or not an integer), naming `field`: one wording for
// the label and the legacy field.
Status PriorityRangeError(const std::string& field, const std::string& got);

}  // namespace trainyard::spec
