// The replica status file: what a replica's supervisor (trainyard-exec-wrapper) writes when the
// replica ends, {"exit_code": N, "end_time": "<job log time>"}, atomically (temp + rename), so a
// reader sees it whole or not at all. The one writer is the wrapper; the readers are the host
// process runtime (local executor), trainyard-slurm-task and the Slurm executor. Its path is the
// launch's `status_file` (replica_runtime.h).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "common/status.h"

namespace trainyard::executor {

struct ReplicaExit {
  int exit_code = 0;     // the replica's exit code, or 128 + signal
  std::string end_time;  // FormatLogTime (job_log.h); "" in files written before it was recorded
};

// Writes `exit_code` with `end_time` (default: now; a write retried until the disk has room keeps
// the replica's exit time). Errors are WriteFileAtomic's: RESOURCE_EXHAUSTED for a full or
// read-only disk.
Status WriteReplicaStatusFile(
    const std::filesystem::path& path, int exit_code,
    std::chrono::system_clock::time_point end_time = std::chrono::system_clock::now());

// NOT_FOUND while it has not been written; DATA_LOSS naming the path if it is not such a file.
StatusOr<ReplicaExit> ReadReplicaStatusFile(const std::filesystem::path& path);

// end_time as a time point; nullopt when empty (older files) or not a timestamp.
std::optional<std::chrono::system_clock::time_point> ExitTimeOf(const ReplicaExit& exit);

}  // namespace trainyard::executor
