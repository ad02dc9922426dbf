#include "spec/custom_job.h"

#include <array>

namespace trainyard::spec {
namespace {

constexpr std::array<std::string_view, 12> kStateNames = {
    "JOB_STATE_UNSPECIFIED", "JOB_STATE_QUEUED",    "JOB_STATE_PENDING",
    "JOB_STATE_RUNNING",     "JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
    "JOB_STATE_CANCELLING",  "JOB_STATE_CANCELLED", "JOB_STATE_PAUSED",
    "JOB_STATE_EXPIRED",     "JOB_STATE_UPDATING",  "JOB_STATE_PARTIALLY_SUCCEEDED"};

}  // namespace

std::string_view JobStateName(JobState state) {
  auto i = static_cast<size_t>(state);
  return i < kStateNames.size() ? kStateNames[i] : "JOB_STATE_UNSPECIFIED";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == name) return static_cast<JobState>(i);
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
