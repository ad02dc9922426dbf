#include "spec/legacy_job.h"

namespace trainyard::spec {
namespace {

constexpr std::string_view kStateNames[] = {"STATE_UNSPECIFIED", "QUEUED",    "PREPARING",
                                            "RUNNING",           "SUCCEEDED", "FAILED",
                                            "CANCELLING",        "CANCELLED"};

}  // namespace

std::string_view LegacyJobStateName(LegacyJobState state) {
  return kStateNames[static_cast<int>(state)];
}

std::optional<LegacyJobState> ParseLegacyJobState(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kStateNames)); ++i) {
    if (kStateNames[i] == name) return static_cast<LegacyJobState>(i);
  }
  return std::nullopt;
}

bool IsTerminal(LegacyJobState state) {
  return state == LegacyJobState::kSucceeded || state == LegacyJobState::kFailed ||
         state == LegacyJobState::kCancelled;
}

LegacyJobState LegacyStateOf(JobState state) {
  switch (state) {
    case JobState::kUnspecified:
    case JobState::kQueued:
      return LegacyJobState::kQueued;
    case JobState::kPending:
      return LegacyJobState::kPreparing;
    case JobState::kRunning:
    case JobState::kUpdating:
    case JobState::kPaused:
      return LegacyJobState::kRunning;
    case JobState::kSucceeded:
      return LegacyJobState::kSucceeded;
    case JobState::kCancelling:
      return LegacyJobState::kCancelling;
    case JobState::kCancelled:
      return LegacyJobState::kCancelled;
    case JobState::kFailed:
    case JobState::kExpired:
    case JobState::kPartiallySucceeded:
      return LegacyJobState::kFailed;
  }
  return LegacyJobState::kFailed;
}

std::string_view ScaleTierName(ScaleTier tier) {
  switch (tier) {
    case ScaleTier::kBasic:
      return "BASIC";
    case ScaleTier::kStandard1:
      return "STANDARD_1";
    case ScaleTier::kPremium1:
      return "PREMIUM_1";
    case ScaleTier::kBasicGpu:
      return "BASIC_GPU";
    case ScaleTier::kBasicTpu:
      return "BASIC_TPU";
    case ScaleTier::kCustom:
      return "CUSTOM";
  }
  return "";
}

}  // namespace trainyard::spec
