// LocalExecutor internals: the in-memory record of a gang and its replicas, how it is persisted
// to <job_dir>/executor_state.json (so Adopt() can pick it up after a restart). Where each
// replica's files live: job_dir_layout.h. Not for use outside src/local_executor/.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "executor/gang_record.h"
#include "executor/job_dir_layout.h"
#include "executor/replica_env.h"
#include "local_executor/local_executor.h"

namespace trainyard::executor {

struct LocalExecutor::Replica {
  int pool_index = 0;
  int replica_index = 0;
  std::vector<int> gpus;
  std::vector<int> cpus;  // CPU ids it is placed on (pinned to when pinning is on)
  int port = 0;
  int attempt = 0;               // launches so far; attempt-<n>.* files belong to launch n
  int restarts = 0;              // restarts of this replica (own or as part of a gang restart)
  ReplicaHandle handle;          // the current attempt (supervisor, replica, its files)
  bool running = false;          // launched and its end not yet seen
  bool done = false;             // ended and its end handled (exit 0, or the gang is stopping)
  std::optional<int> exit_code;  // of the latest attempt
  // When the latest attempt ended (its status file's end_time); unset if unknown or running.
  std::optional<std::chrono::system_clock::time_point> end_time;
  // Waiting for its restart (backoff): when it starts again, and RestartNote's words for it.
  std::optional<std::chrono::system_clock::time_point> restart_at;
  std::string restart_note;
  std::string lost_reason;                               // ended without a recorded exit code
  GangFailure lost_failure = GangFailure::kReplicaLost;  // not persisted
  // The current attempt's cgroups, the memory one first (CgroupLimits::Create); empty = none.
  std::vector<std::filesystem::path> cgroups;
  // Set when the latest attempt was OOM-killed (OomMessage): its failure message. Not persisted.
  std::string oom_note;
};

// The lifecycle fields (state, failure, restarts_used, times, stop goal and message, killed) come
// from GangRecord (gang_lifecycle.h), persisted the same way as the SlurmExecutor's.
struct LocalExecutor::Gang : GangRecord {
  GangSpec spec;
  std::vector<ReplicaDemand> demands;
  std::vector<std::string> warnings;  // logged when the gang starts
  std::vector<Replica> replicas;
  // The last write of executor_state.json failed (a full or read-only disk): the next pass
  // (Tick) writes it again, so the file catches up once there is room. Mutable: Persist takes
  // the gang as const.
  mutable bool state_unsaved = false;
  // Why an admitted gang went back to the queue (RoomToStart); GangStatus::waiting_note. Not
  // persisted: a restarted server finds out again.
  std::string waiting_note;
  // The executor's own job-log lines ("[trainyard] ...") the disk refused since the last one it
  // took, and why ("disk full"): said in the log once a write succeeds (SystemLog). Mutable, as
  // state_unsaved; not persisted.
  mutable int64_t lost_log_lines = 0;
  mutable std::string lost_log_reason;
};

// The environment replicas inherit: the server's, with TRAINYARD_BUCKET_ROOT set to the bucket
// root in use and the server binary's own directory appended to PATH (so `trainyard-bert` and
// friends installed next to the server resolve like tools baked into a training image).
EnvMap InheritedReplicaEnv();

// <job_dir>/executor_state.json (LocalStateFile, job_dir_layout.h).
// `durable` = fsync (WriteFileAtomic). Otherwise write-temp-then-rename without fsync
// (ReplaceFile): readers never see a torn file and it survives a crash of the server process
// (the case re-adoption is for), but not necessarily a power loss — after which no replica is
// running anyway. Only terminal states are written durably.
std::string SerializeGang(const LocalExecutor::Gang& gang);
Status SaveGangState(const LocalExecutor::Gang& gang, bool durable);
struct PersistedGang {
  GangStatus status;
  LocalExecutor::Gang gang;  // spec/demands not filled
};
// NOT_FOUND if the gang never got that far, DATA_LOSS if the file is corrupt.
StatusOr<PersistedGang> LoadGangState(const std::filesystem::path& job_dir);

// <data_dir>/executor/jobs/<job_id> remembers each job's dir (gang_record.h), so Get/ReadLogs
// work for jobs that ended before a server restart.
inline constexpr char kLocalRegistry[] = "executor";

GangStatus StatusFromGang(const LocalExecutor::Gang& gang);

}  // namespace trainyard::executor
