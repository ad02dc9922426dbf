// SlurmExecutor internals: the in-memory record of a gang and its durable form,
// <job_dir>/slurm_state.json (executor::SlurmStateFile, job_dir_layout.h; written atomically on
// every change; read by Adopt and by Get for jobs that ended before a server restart). Not for
// use outside src/slurm/.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "executor/gang_record.h"
#include "executor/job_dir_layout.h"
#include "slurm/slurm_executor.h"

namespace trainyard::slurm {

struct SlurmReplica {
  int pool_index = 0;
  int replica_index = 0;
  int64_t pid = 0;               // from the task's pid file (a pid on its node)
  std::optional<int> exit_code;  // from the task's status file, current attempt
  std::string end_time;          // its "end_time" (ISO 8601 UTC, sortable as text)
};

// The lifecycle fields (state, failure, restarts_used, times, stop goal and message, killed) come
// from executor::GangRecord (gang_lifecycle.h), persisted the same way as the LocalExecutor's.
struct SlurmExecutor::Gang : executor::GangRecord {
  executor::GangSpec spec;
  int attempt = 0;           // attempt-<n> directory of the current Slurm job
  std::string slurm_job_id;  // "" while a (re)submission is in flight
  bool resubmit_pending = false;
  // With resubmit_pending: not before this (restart backoff), and RestartNote's words for it.
  std::optional<std::chrono::system_clock::time_point> resubmit_at;
  std::string restart_note;
  // Persisted before sbatch runs for `attempt` and cleared once its job id is recorded: after a
  // crash in between, the attempt is looked up in Slurm by its job name (SlurmJobName) instead
  // of being submitted a second time.
  bool submitting = false;
  bool in_flight = false;  // not persisted: this process is submitting or looking up `attempt`
  // Not persisted: why the submission waits (slurmctld unreachable); GangStatus::waiting_note.
  std::string waiting_note;
  bool done = false;
  std::string slurm_state, slurm_reason;  // as last seen
  int missing_polls = 0;
  std::map<std::string, int64_t> log_cursors;  // task name -> cursor in its attempt log
  int64_t batch_out_offset = 0;
  std::vector<SlurmReplica> replicas;  // GangSpec order
};

// An sbatch that failed because slurmctld did not answer (down, restarting, unreachable, or
// sbatch timing out), not because Slurm refused the job: the job waits for it instead of failing.
bool SlurmControllerUnreachable(const Status& status);

// For a job submitted as `user` (SlurmTarget::user): gives it the attempt directory (batch.out,
// rendezvous, the tasks' files) and each replica's work and hypertune directories, which the
// job, no longer root, cannot create in the server's job dir itself.
Status HandOverAttempt(const executor::GangSpec& spec, const std::filesystem::path& attempt_dir,
                       const executor::RunAs& user);

std::string SerializeSlurmGang(const SlurmExecutor::Gang& gang);
// NOT_FOUND without a state file, DATA_LOSS when it is corrupt. spec is left empty except
// job_id and job_dir.
StatusOr<SlurmExecutor::Gang> LoadSlurmGang(const std::filesystem::path& job_dir);
Status SaveSlurmGang(const SlurmExecutor::Gang& gang);
executor::GangStatus SlurmGangStatus(const SlurmExecutor::Gang& gang);

// When `replica` exited: its status file's end_time; nullopt if it has none or none readable.
std::optional<std::chrono::system_clock::time_point> ExitTimeOf(const SlurmReplica& replica);
// The current attempt's last exit, when every replica has a known one (EndedAt); else nullopt.
std::optional<std::chrono::system_clock::time_point> LastExitOf(const SlurmExecutor::Gang& gang);

// <data_dir>/slurm/jobs/<job_id> remembers each job's dir (Get/ReadLogs after a restart).
inline constexpr char kSlurmRegistry[] = "slurm";

}  // namespace trainyard::slurm
