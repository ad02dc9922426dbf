#include "spec/custom_job.h"

#include "protojson/reader.h"

namespace trainyard::spec {
namespace {

constexpr protojson::EnumEntry<JobState> kJobStateEntries[] = {
    {"JOB_STATE_UNSPECIFIED", 0, JobState::kUnspecified},
    {"JOB_STATE_QUEUED", 1, JobState::kQueued},
    {"JOB_STATE_PENDING", 2, JobState::kPending},
    {"JOB_STATE_RUNNING", 3, JobState::kRunning},
    {"JOB_STATE_SUCCEEDED", 4, JobState::kSucceeded},
    {"JOB_STATE_FAILED", 5, JobState::kFailed},
    {"JOB_STATE_CANCELLING", 6, JobState::kCancelling},
    {"JOB_STATE_CANCELLED", 7, JobState::kCancelled},
    {"JOB_STATE_PAUSED", 8, JobState::kPaused},
    {"JOB_STATE_EXPIRED", 9, JobState::kExpired},
    {"JOB_STATE_UPDATING", 10, JobState::kUpdating},
    {"JOB_STATE_PARTIALLY_SUCCEEDED", 11, JobState::kPartiallySucceeded},
};

}  // namespace

const protojson::EnumType<JobState>& JobStateType() {
  static constexpr protojson::EnumType<JobState> kType = {"google.cloud.aiplatform.v1.JobState",
                                                          kJobStateEntries};
  return kType;
}

std::span<const SchedulingStrategy> SchedulingStrategies() {
  static constexpr SchedulingStrategy kStrategies[] = {{"STRATEGY_UNSPECIFIED", 0},
                                                       {"ON_DEMAND", 1},
                                                       {"LOW_COST", 2},
                                                       {"STANDARD", 3},
                                                       {"SPOT", 4},
                                                       {"FLEX_START", 6}};
  return kStrategies;
}

std::string_view JobStateName(JobState state) {
  std::string_view name = JobStateType().NameOf(state);
  return name.empty() ? "JOB_STATE_UNSPECIFIED" : name;
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (const auto& e : kJobStateEntries) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

bool IsTerminal(JobState state) {
  switch (state) {
    case JobState::kSucceeded:
    case JobState::kFailed:
    case JobState::kCancelled:
    case JobState::kExpired:
    case JobState::kPartiallySucceeded:
      return true;
    default:
      return false;
  }
}

}  // namespace trainyard::spec
