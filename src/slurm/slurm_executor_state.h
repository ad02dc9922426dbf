// SlurmExecutor internals: the in-memory record of a gang and its durable form,
// <job_dir>/slurm_state.json (written atomically on every change; read by Adopt and by Get for
// jobs that ended before a server restart). Not for use outside src/slurm/.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/slurm_executor.h"

namespace trainyard::slurm {

enum class StopGoal { kNone = 0, kCancel = 1, kSucceed = 2, kTimeout = 3 };

struct SlurmReplica {
  int pool_index = 0;
  int replica_index = 0;
  int64_t pid = 0;               // from the task's pid file (a pid on its node)
  std::optional<int> exit_code;  // from the task's status file, current attempt
  std::string end_time;          // its "end_time" (ISO 8601 UTC, sortable as text)
};

struct SlurmExecutor::Gang {
  executor::GangSpec spec;
  int attempt = 0;           // attempt-<n> directory of the current Slurm job
  std::string slurm_job_id;  // "" while a (re)submission is in flight
  bool resubmit_pending = false;
  executor::GangState state = executor::GangState::kQueued;
  bool done = false;
  int restarts_used = 0;
  std::optional<std::chrono::system_clock::time_point> start_time, end_time;
  std::string error_message;
  StopGoal stop_goal = StopGoal::kNone;
  std::string stop_message;
  std::chrono::system_clock::time_point stop_started;
  bool killed = false;                    // the plain scancel (after kill_grace) was sent
  std::string slurm_state, slurm_reason;  // as last seen
  int missing_polls = 0;
  std::map<std::string, int64_t> log_cursors;  // task name -> cursor in its attempt log
  int64_t batch_out_offset = 0;
  std::vector<SlurmReplica> replicas;  // GangSpec order
};

std::string SerializeSlurmGang(const SlurmExecutor::Gang& gang);
// NOT_FOUND without a state file, DATA_LOSS when it is corrupt. spec is left empty except
// job_id and job_dir.
StatusOr<SlurmExecutor::Gang> LoadSlurmGang(const std::filesystem::path& job_dir);
Status SaveSlurmGang(const SlurmExecutor::Gang& gang);
executor::GangStatus SlurmGangStatus(const SlurmExecutor::Gang& gang);

// <data_dir>/slurm/jobs/<job_id> remembers each job's dir (Get/ReadLogs after a restart).
Status RegisterSlurmJobDir(const std::filesystem::path& data_dir, const std::string& job_id,
                           const std::filesystem::path& job_dir);
StatusOr<std::filesystem::path> LookupSlurmJobDir(const std::filesystem::path& data_dir,
                                                  const std::string& job_id);

}  // namespace trainyard::slurm
