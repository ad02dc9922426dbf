#include "controller/resource_directory.h"

#include "spec/model.h"
#include "spec/resource_name.h"
#include "spec/training_pipeline.h"

namespace trainyard::controller {
namespace {

// project -> location -> collection -> count.
using Tally = std::map<std::string, std::map<std::string, std::map<std::string, int64_t>>>;

// Adds the counts of one collection; parents that are not "projects/P/locations/L" are skipped.
void Add(const std::vector<store::ParentCount>& counts, const std::string& collection,
         const std::string& only_project, Tally* tally) {
  constexpr std::string_view kProjects = "projects/", kLocations = "/locations/";
  for (const store::ParentCount& c : counts) {
    if (!c.parent.starts_with(kProjects)) continue;
    const size_t slash = c.parent.find(kLocations, kProjects.size());
    if (slash == std::string::npos) continue;
    std::string project = c.parent.substr(kProjects.size(), slash - kProjects.size());
    std::string location = c.parent.substr(slash + kLocations.size());
    if (location.empty() || location.find('/') != std::string::npos) continue;
    if (only_project != "*" && project != only_project) continue;
    (*tally)[project][location][collection] += c.count;
  }
}

}  // namespace

ResourceDirectory::ResourceDirectory(store::JobStore* jobs, store::TuningJobStore* tuning_jobs,
                                     store::ResourceStore* resources)
    : jobs_(jobs), tuning_jobs_(tuning_jobs), resources_(resources) {}

const std::vector<std::string>& ResourceDirectory::Collections() {
  static const std::vector<std::string> kCollections = {
      std::string(spec::kCustomJobs), std::string(spec::kHyperparameterTuningJobs),
      std::string(spec::kTrainingPipelines), std::string(spec::kModels)};
  return kCollections;
}

StatusOr<std::vector<ProjectSummary>> ResourceDirectory::Projects(
    const std::string& project) const {
  Tally tally;
  TY_ASSIGN_OR_RETURN(std::vector<store::ParentCount> jobs, jobs_->CountJobsByParent());
  Add(jobs, std::string(spec::kCustomJobs), project, &tally);
  TY_ASSIGN_OR_RETURN(std::vector<store::ParentCount> tuning,
                      tuning_jobs_->CountTuningJobsByParent());
  Add(tuning, std::string(spec::kHyperparameterTuningJobs), project, &tally);
  for (std::string_view kind : {spec::kTrainingPipelines, spec::kModels}) {
    TY_ASSIGN_OR_RETURN(std::vector<store::ParentCount> counts,
                        resources_->CountResourcesByParent(std::string(kind)));
    Add(counts, std::string(kind), project, &tally);
  }
  if (project != "*") tally.try_emplace(project);
  std::vector<ProjectSummary> out;
  for (auto& [p, locations] : tally) {
    ProjectSummary summary{p, {}};
    for (auto& [l, counts] : locations) summary.locations.push_back({l, std::move(counts)});
    out.push_back(std::move(summary));
  }
  return out;
}

}  // namespace trainyard::controller
