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

}  // namespace trainyard::executor
