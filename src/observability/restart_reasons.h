// Why replicas restarted, read back from a custom job: its trainyardInfo.replicas count the
// restarts, and its state history has one step per restart that the job controller saw, with the
// exit code the replica had before it (controller/job_controller.cc RecordRestarts:
// "workerpool0-0 restarted (restart 2, it had exited with code 137)").
//
// Honest about what that data supports: an exit code above 128 is a signal (executor.h: 128 +
// signal), SIGKILL apart because it is what the kernel's OOM killer and memory cgroup limits
// send (but also `kill -9`: it is not proof of OOM); a restart without a step or whose step names
// no exit code (a replica lost with its node, a preempted Slurm job, two restarts between two
// status reports, a step dropped by the history cap) is "unknown".
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "spec/custom_job.h"

namespace trainyard::observability {

enum class RestartReason { kExitCode, kSigkill, kSignal, kUnknown };

// "exit_code", "sigkill", "signal", "unknown": the `reason` label.
std::string_view RestartReasonName(RestartReason reason);
// The reason of a restart after exit code `code`.
RestartReason RestartReasonOfExit(int code);

// The restarts of `job`'s replicas beyond `seen` (task name, e.g. "workerpool0-0" -> restarts
// already counted), by reason; `seen` is updated to the job's counts. Never fails: what the
// history does not explain is kUnknown.
std::map<RestartReason, int> NewRestarts(const spec::CustomJob& job,
                                         std::map<std::string, int>& seen);

}  // namespace trainyard::observability
