#include "executor/executor.h"

namespace trainyard::executor {

std::string GangStateName(GangState state) {
  switch (state) {
    case GangState::kQueued:
      return "QUEUED";
    case GangState::kPending:
      return "PENDING";
    case GangState::kRunning:
      return "RUNNING";
    case GangState::kSucceeded:
      return "SUCCEEDED";
    case GangState::kFailed:
      return "FAILED";
    case GangState::kCancelling:
      return "CANCELLING";
    case GangState::kCancelled:
      return "CANCELLED";
  }
  return "QUEUED";
}

std::optional<GangState> GangStateFromName(const std::string& name) {
  for (GangState st :
       {GangState::kQueued, GangState::kPending, GangState::kRunning, GangState::kSucceeded,
        GangState::kFailed, GangState::kCancelling, GangState::kCancelled}) {
    if (GangStateName(st) == name) return st;
  }
  return std::nullopt;
}

namespace {
constexpr GangFailure kAllFailures[] = {
    GangFailure::kNone,        GangFailure::kReplicaFailed,    GangFailure::kReplicaLost,
    GangFailure::kTimeout,     GangFailure::kCancelled,        GangFailure::kStartFailed,
    GangFailure::kLostOnAdopt, GangFailure::kImageUnavailable, GangFailure::kConfigError};
}  // namespace

std::string GangFailureName(GangFailure failure) {
  switch (failure) {
    case GangFailure::kNone:
      return "NONE";
    case GangFailure::kReplicaFailed:
      return "REPLICA_FAILED";
    case GangFailure::kReplicaLost:
      return "REPLICA_LOST";
    case GangFailure::kTimeout:
      return "TIMEOUT";
    case GangFailure::kCancelled:
      return "CANCELLED";
    case GangFailure::kStartFailed:
      return "START_FAILED";
    case GangFailure::kLostOnAdopt:
      return "LOST_ON_ADOPT";
    case GangFailure::kImageUnavailable:
      return "IMAGE_UNAVAILABLE";
    case GangFailure::kConfigError:
      return "CONFIG_ERROR";
  }
  return "NONE";
}

std::optional<GangFailure> GangFailureFromName(const std::string& name) {
  for (GangFailure f : kAllFailures) {
    if (GangFailureName(f) == name) return f;
  }
  return std::nullopt;
}

}  // namespace trainyard::executor
