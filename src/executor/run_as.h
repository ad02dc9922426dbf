// What executors do for a gang whose replicas run as another Unix user (GangSpec::run_as):
// give that user the directories the replica writes, and its identity's environment. Shared by
// the LocalExecutor (on this host) and trainyard-slurm-task (on the task's node), so both
// prepare the same directories the same way.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"
#include "executor/replica_env.h"

namespace trainyard::executor {

// The identity of Unix user `user` on this host (getpwnam_r + getgrouplist): uid, primary gid,
// supplementary groups (primary excluded), home; no bucket group. NOT_FOUND if there is no such
// user, INTERNAL if the lookup itself fails.
StatusOr<RunAs> LookUpUser(const std::string& user);

// Creates `dir` and any missing parents. With `run_as`, `dir` itself (not the parents: a bucket,
// the job dir) is given to that user (chown uid:gid) when the server owns it, i.e. made it now or
// for an earlier attempt; a directory another user owns is left alone. Errors name the directory.
Status MakeReplicaDir(const std::filesystem::path& dir, const std::optional<RunAs>& run_as);

// The directories a replica writes: `work_dir` and the directory of the hypertune metric file
// (MakeReplicaDir), and with `run_as` its output dirs (ReplicaOutputDirs): first checked
// (CheckOutputDirs: FAILED_PRECONDITION, nothing made), then every missing directory on the way
// to them is made with the bucket group (RunAs::bucket_group, else the user's primary group) and
// mode 02775 (setgid: what is made inside keeps the group); those at or below the base output dir
// belong to `run_as`, those above it (between the bucket and the base) to the server. A bucket is
// never made: FAILED_PRECONDITION when the base output dir's bucket does not exist
// (CheckBucketExists). Without `run_as` output dirs are left to the replica, which runs as the
// server's user.
Status PrepareReplicaDirs(const std::filesystem::path& work_dir, const ReplicaEnvInput& in,
                          const std::optional<RunAs>& run_as);

// The local directories of a replica's outputs, in the order they are made: the base output dir,
// `<base>/<trial>` for a trial, then AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR
// (replica_contract::OutputDirsFor; gs:// URIs map under BucketRoot()), absolute and without a
// trailing '/'. Empty without a base. INVALID_ARGUMENT for a URI that does not map.
StatusOr<std::vector<std::filesystem::path>> ReplicaOutputDirs(const std::string& base_output_dir,
                                                               const std::string& trial_id);

// OK when `run_as` can use the output dirs (ReplicaOutputDirs) as far as they exist: search every
// directory on the way, and write (w and x, by the owner, else the group, else the other bits, as
// the kernel decides) the base output dir and every directory below it. FAILED_PRECONDITION
// otherwise, naming the directory, its owner, group and mode, and the fix. Directories not made
// yet are fine. JobController::Create calls it, so such a job is refused before it queues;
// PrepareReplicaDirs again at every start.
Status CheckOutputDirs(const std::string& base_output_dir, const std::string& trial_id,
                       const RunAs& run_as);

// OK when `run_as` may search every directory on the way to `dir` (and `dir` itself), by the
// owner/group/other x bits; FAILED_PRECONDITION naming the first directory that stops it, its
// mode and owner otherwise. A server checks its jobs dir and bucket root with it at start-up, so a
// data dir under a private home fails there, not as "permission denied" inside every job.
Status CheckCanReach(const std::filesystem::path& dir, const RunAs& run_as);

// For a job whose replicas run as another user: `job_dir` becomes 0711 (the replica reaches its
// work dir but cannot list the job's files) and `log_dir` 0700 (the supervisor writes the job log;
// a replica of another job must not read it). Creates both if missing.
Status HideJobFiles(const std::filesystem::path& job_dir, const std::filesystem::path& log_dir);

// HOME, USER and LOGNAME of `run_as` into `inherited` (the environment a host process starts
// from), so a replica does not find the server's $HOME it cannot write. No-op without run_as.
void ApplyIdentityEnv(const std::optional<RunAs>& run_as, EnvMap* inherited);

// For plans handed to other machines (trainyard-slurm-task): {"user","uid","gid","groups","home"}.
nlohmann::json RunAsToJson(const RunAs& run_as);
// INVALID_ARGUMENT naming the missing or mistyped field.
StatusOr<RunAs> RunAsFromJson(const nlohmann::json& j);

}  // namespace trainyard::executor
