#include "output_format.h"

#include <algorithm>
#include <cstdio>

#include "spec/job_config_yaml.h"
#include "spec/resource_name.h"

namespace trainyard::cli {

Status CheckFormat(const std::string& format) {
  if (format.empty() || format == "json" || format == "yaml" || format == "table") {
    return Status::Ok();
  }
  return InvalidArgumentError("--format: '" + format +
                              "' is not supported; use json, yaml or table");
}

std::string FormatJobs(const std::vector<nlohmann::json>& jobs, const std::string& format,
                       bool as_list) {
  if (format == "json") {
    if (!as_list && jobs.size() == 1) return jobs[0].dump(2) + "\n";
    return nlohmann::json(jobs).dump(2) + "\n";
  }
  if (format == "yaml") {
    if (!as_list && jobs.size() == 1) return spec::JsonToYaml(jobs[0]);
    std::string out;
    for (const auto& j : jobs) out += "---\n" + spec::JsonToYaml(j);
    return out;
  }
  std::vector<std::vector<std::string>> rows = {
      {"ID", "DISPLAY_NAME", "STATE", "CREATE_TIME", "EST_COST_USD"}};
  for (const auto& j : jobs) {
    std::string name = j.value("name", "");
    char cost[32] = "";
    if (j.contains("trainyardInfo")) {
      std::snprintf(cost, sizeof cost, "%.4f", j["trainyardInfo"].value("estimatedCostUsd", 0.0));
    }
    rows.push_back({std::string(spec::LastSegment(name)), j.value("displayName", ""),
                    j.value("state", ""), j.value("createTime", ""), cost});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace trainyard::cli
