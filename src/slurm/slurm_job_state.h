// How Slurm's job states map onto the executor's GangState (executor.h).
//
//   PENDING, REQUEUED, REQUEUE_HOLD, REQUEUE_FED, RESV_DEL_HOLD, SUSPENDED-before-start -> kQueued
//   CONFIGURING                                  -> kPending (nodes are being set up)
//   RUNNING, COMPLETING, SUSPENDED, STOPPED, RESIZING, SIGNALING, STAGE_OUT -> kRunning
//   COMPLETED                                    -> kSucceeded (if the primary replica exited 0)
//   FAILED, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, SPECIAL_EXIT, REVOKED -> kFailed
//   TIMEOUT                                      -> kFailed "timed out after Ns"
//   PREEMPTED                                    -> restart (while the restart budget lasts)
//                                                   or kFailed
//   CANCELLED                                    -> kCancelled
// Unknown names count as running (newer Slurm releases add transitional states) — a job is
// only ever ended on a state listed here.
#pragma once

#include <string_view>

namespace trainyard::slurm {

enum class SlurmStateClass {
  kQueued,
  kStarting,
  kRunning,
  kCompleted,
  kFailed,
  kTimeout,
  kPreempted,
  kCancelled,
};

SlurmStateClass ClassifySlurmState(std::string_view base_state);
bool IsTerminal(SlurmStateClass c);
const char* SlurmStateClassName(SlurmStateClass c);

}  // namespace trainyard::slurm
