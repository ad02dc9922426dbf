#include "observability/resource_counts.h"

#include <functional>
#include <string_view>

#include "controller/legacy_job_controller.h"
#include "controller/model_registry.h"
#include "controller/operation_controller.h"
#include "spec/custom_job.h"
#include "spec/legacy_job.h"
#include "spec/model.h"
#include "spec/training_pipeline.h"

namespace trainyard::observability {
namespace {

using StateNameFn = std::function<std::string(int64_t)>;

std::string Unknown(int64_t state) { return "STATE_" + std::to_string(state); }

std::string JobStateLabel(int64_t state) {
  if (state < 0 || state > static_cast<int64_t>(spec::JobState::kPartiallySucceeded)) {
    return Unknown(state);
  }
  return std::string(spec::JobStateName(static_cast<spec::JobState>(state)));
}

std::string PipelineStateLabel(int64_t state) {
  const std::string_view name = spec::PipelineStateName(static_cast<int>(state));
  return name.empty() ? Unknown(state) : std::string(name);
}

std::string LegacyStateLabel(int64_t state) {
  if (state < 0 || state > static_cast<int64_t>(spec::LegacyJobState::kCancelled)) {
    return Unknown(state);
  }
  return std::string(spec::LegacyJobStateName(static_cast<spec::LegacyJobState>(state)));
}

// The operation controller owns the numbers; its vocabulary maps the two names to them.
std::string OperationStateLabel(int64_t state) {
  for (std::string_view name : {"RUNNING", "DONE"}) {
    if (controller::OperationStates().parse(name) == state) return std::string(name);
  }
  return Unknown(state);
}

// One entry per state; a kind without states gets one entry (every name maps to one number, so
// no two entries share labels).
void Append(const std::string& kind, const std::vector<store::StateCount>& counts,
            const StateNameFn& name, std::vector<ResourceCount>* out) {
  if (!name) {
    ResourceCount all{kind, "", 0};
    for (const store::StateCount& c : counts) all.count += c.count;
    if (all.count > 0) out->push_back(all);
    return;
  }
  for (const store::StateCount& c : counts) out->push_back({kind, name(c.state), c.count});
}

}  // namespace

StatusOr<std::vector<ResourceCount>> CountResources(store::JobStore* jobs,
                                                    store::TuningJobStore* tuning_jobs,
                                                    store::ResourceStore* resources) {
  std::vector<ResourceCount> out;
  if (jobs) {
    TY_ASSIGN_OR_RETURN(auto counts, jobs->CountJobsByState());
    Append("customJobs", counts, JobStateLabel, &out);
  }
  if (tuning_jobs) {
    TY_ASSIGN_OR_RETURN(auto counts, tuning_jobs->CountTuningJobsByState());
    Append("hyperparameterTuningJobs", counts, JobStateLabel, &out);
  }
  if (!resources) return out;
  const std::pair<std::string, StateNameFn> kinds[] = {
      {std::string(spec::kTrainingPipelines), PipelineStateLabel},
      {controller::kLegacyJobsKind, LegacyStateLabel},
      {std::string(spec::kModels), nullptr},
      {controller::kModelVersionsKind, nullptr},
      {controller::kOperationsKind, OperationStateLabel},
  };
  for (const auto& [kind, name] : kinds) {
    TY_ASSIGN_OR_RETURN(auto counts, resources->CountResourcesByState(kind));
    Append(kind, counts, name, &out);
  }
  return out;
}

}  // namespace trainyard::observability
