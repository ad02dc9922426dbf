// The layout of a job's directory on the server: the one place that names its entries. Every
// other module (the job controller, the server, the executors, trainyard-slurm-task) builds
// these paths through the functions below; job_dir_layout_test.cc pins them. The names are on
// disk in existing data dirs, so they never change.
//
//   <jobs_dir>/                      DataDir::jobs_dir() = <data_dir>/jobs (server/data_dir.h)
//     <job_id>/                      JobDir: GangSpec::job_dir; made by the executor at Submit,
//                                    removed by JobController::Delete
//       logs/                        JobLogDir: segment-<offset>.log and .lock (format:
//                                    job_log.h); written by trainyard-exec-wrapper and the
//                                    executors' [trainyard] notes, read by Get/ReadLogs, the
//                                    logs routes and CONFIG_ERROR's last stderr line
//       executor_state.json          LocalStateFile: the LocalExecutor's gang record
//                                    (local_executor_state.h), read back by Adopt and Get
//       slurm_state.json             SlurmStateFile: the SlurmExecutor's (slurm_executor_state.h)
//       work/<task>/                 ReplicaWorkDir: a replica's working directory, the same
//                                    for every attempt (task = "workerpool1-0", TaskName)
//       replicas/<task>/             ReplicaDir (LocalExecutor)
//         attempt-<n>.pid|.status|.wrapper.log   ReplicaAttemptFile: written by
//                                    trainyard-exec-wrapper (replica_status_file.h), read by the
//                                    LocalExecutor; .container.json|.container-error by the
//                                    container runtime (container/podman_replica_runtime.h)
//         hypertune/output.metrics   ReplicaHpMetricFile: CLOUD_ML_HP_METRIC_FILE on every
//                                    executor; written by cloudml-hypertune in the replica,
//                                    read by HP tuning (the server's metric_file)
//       deleted.json                 kDeletedMarkerName: written by JobController::Delete, which
//                                    leaves only logs/ and this (controller/job_files.h); the
//                                    dir goes whole when log retention ends (server/retention.h)
//       slurm/attempt-<n>/           SlurmAttemptDir (SlurmExecutor): job.sbatch, plan.json,
//                                    batch.out, nodes (slurm_script.h)
//         <task>/                    SlurmTaskDir: the task's log/, pid, status, written by
//                                    trainyard-slurm-task, read by the SlurmExecutor
//
// Pure path arithmetic: nothing here touches the file system, except that ReplicaHpMetricFile
// is made absolute (a replica's environment must not depend on its working directory).
#pragma once

#include <filesystem>
#include <string>

namespace trainyard::executor {

// Entry names directly under a job dir.
inline constexpr char kJobLogDirName[] = "logs";
inline constexpr char kReplicasDirName[] = "replicas";
inline constexpr char kWorkDirName[] = "work";
inline constexpr char kSlurmDirName[] = "slurm";
inline constexpr char kLocalStateFileName[] = "executor_state.json";
inline constexpr char kSlurmStateFileName[] = "slurm_state.json";
inline constexpr char kDeletedMarkerName[] = "deleted.json";
// Under replicas/<task>/.
inline constexpr char kHypertuneDirName[] = "hypertune";
inline constexpr char kHpMetricFileName[] = "output.metrics";

// <jobs_dir>/<job_id>. `job_id` must already be a safe id (ValidateGangBasics, the store's ids).
std::filesystem::path JobDir(const std::filesystem::path& jobs_dir, const std::string& job_id);

// <job_dir>/logs: the job log's directory (job_log.h).
std::filesystem::path JobLogDir(const std::filesystem::path& job_dir);

// <job_dir>/executor_state.json and <job_dir>/slurm_state.json.
std::filesystem::path LocalStateFile(const std::filesystem::path& job_dir);
std::filesystem::path SlurmStateFile(const std::filesystem::path& job_dir);

// <job_dir>/work/<task>: replica (pool, replica)'s working directory.
std::filesystem::path ReplicaWorkDir(const std::filesystem::path& job_dir, int pool, int replica);

// <job_dir>/replicas/<task>: the wrapper's files of each attempt and the hypertune file.
std::filesystem::path ReplicaDir(const std::filesystem::path& job_dir, int pool, int replica);
// <job_dir>/replicas/<task>/attempt-<attempt>.<suffix>; suffix "pid", "status", "wrapper.log".
std::filesystem::path ReplicaAttemptFile(const std::filesystem::path& job_dir, int pool,
                                         int replica, int attempt, const std::string& suffix);
// fs::absolute(<job_dir>)/replicas/<task>/hypertune/output.metrics, on every executor.
std::filesystem::path ReplicaHpMetricFile(const std::filesystem::path& job_dir, int pool,
                                          int replica);

// <job_dir>/slurm/attempt-<attempt>: one Slurm submission's files.
std::filesystem::path SlurmAttemptDir(const std::filesystem::path& job_dir, int attempt);
// <attempt_dir>/<task>: one task's files within an attempt.
std::filesystem::path SlurmTaskDir(const std::filesystem::path& attempt_dir, int pool, int replica);

}  // namespace trainyard::executor
