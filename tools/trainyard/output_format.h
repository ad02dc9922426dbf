// --format=json|yaml|table for the CLI, like gcloud's output formats (subset).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::cli {

// INVALID_ARGUMENT naming --format for anything but json, yaml, table.
Status CheckFormat(const std::string& format);

// Renders one resource or a list of CustomJobs. "table" shows ID, DISPLAY_NAME, STATE,
// CREATE_TIME and the estimated cost.
std::string FormatJobs(const std::vector<nlohmann::json>& jobs, const std::string& format,
                       bool as_list);

}  // namespace trainyard::cli
