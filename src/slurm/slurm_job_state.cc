#include "slurm/slurm_job_state.h"

namespace trainyard::slurm {

SlurmStateClass ClassifySlurmState(std::string_view s) {
  if (s == "PENDING" || s == "REQUEUED" || s == "REQUEUE_HOLD" || s == "REQUEUE_FED" ||
      s == "RESV_DEL_HOLD") {
    return SlurmStateClass::kQueued;
  }
  if (s == "CONFIGURING") return SlurmStateClass::kStarting;
  if (s == "COMPLETED") return SlurmStateClass::kCompleted;
  if (s == "FAILED" || s == "NODE_FAIL" || s == "OUT_OF_MEMORY" || s == "BOOT_FAIL" ||
      s == "DEADLINE" || s == "SPECIAL_EXIT" || s == "REVOKED") {
    return SlurmStateClass::kFailed;
  }
  if (s == "TIMEOUT") return SlurmStateClass::kTimeout;
  if (s == "PREEMPTED") return SlurmStateClass::kPreempted;
  if (s == "CANCELLED") return SlurmStateClass::kCancelled;
  return SlurmStateClass::kRunning;
}

bool IsTerminal(SlurmStateClass c) {
  switch (c) {
    case SlurmStateClass::kQueued:
    case SlurmStateClass::kStarting:
    case SlurmStateClass::kRunning:
      return false;
    default:
      return true;
  }
}

const char* SlurmStateClassName(SlurmStateClass c) {
  switch (c) {
    case SlurmStateClass::kQueued:
      return "queued";
    case SlurmStateClass::kStarting:
      return "starting";
    case SlurmStateClass::kRunning:
      return "running";
    case SlurmStateClass::kCompleted:
      return "completed";
    case SlurmStateClass::kFailed:
      return "failed";
    case SlurmStateClass::kTimeout:
      return "timeout";
    case SlurmStateClass::kPreempted:
      return "preempted";
    case SlurmStateClass::kCancelled:
      return "cancelled";
  }
  return "running";
}

}  // namespace trainyard::slurm
