// What every executor persists about a gang in the same way (LocalExecutor's
// executor_state.json, SlurmExecutor's slurm_state.json): the lifecycle fields, timestamps as
// microseconds, the <data_dir>/<registry>/jobs/<job_id> file that remembers a job's directory
// across restarts, and the checks every executor makes on a GangSpec before anything else.
// Shared so that the executors' state files and messages cannot drift apart.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "executor/executor.h"
#include "executor/gang_lifecycle.h"

namespace trainyard::executor {

using trainyard::FromUnixMicros;  // common/time.h
using trainyard::ToUnixMicros;

// Writes the GangRecord (gang_lifecycle.h) into `j` ("state", "failure", "restarts_used",
// "start_time_us", "stop_goal", "restart_due_us" while a gang restart waits, ...).
void GangRecordToJson(const GangRecord& record, nlohmann::json* j);
// Reads them back; throws nlohmann::json::exception for a missing or mistyped field (callers
// turn that into DATA_LOSS naming their file). An unknown state name reads as QUEUED. State files
// written before the one StopGoal enum stored "stop_goal" as that executor's own number:
// `legacy_goals[n]` is what number n meant there. Files without "failure" (older ones) read
// kReplicaFailed for FAILED and kCancelled for CANCELLED.
void GangRecordFromJson(const nlohmann::json& j, const std::vector<StopGoal>& legacy_goals,
                        GangRecord* record);

// The job-dir registry: <data_dir>/<registry>/jobs/<job_id> holds the absolute job dir, so
// Get/ReadLogs work for jobs that ended before a restart. An empty data_dir remembers nothing.
// Written temp-then-rename (no fsync: losing it on power loss only loses Get of ended jobs).
Status RegisterJobDir(const std::filesystem::path& data_dir, const std::string& registry,
                      const std::string& job_id, const std::filesystem::path& job_dir);
// NOT_FOUND "job X is not known to this executor" when nothing is registered.
StatusOr<std::filesystem::path> LookupJobDir(const std::filesystem::path& data_dir,
                                             const std::string& registry,
                                             const std::string& job_id);

// Removes what RegisterJobDir wrote for `job_id` (retention, once the job dir itself is gone).
// OK when nothing is registered.
Status ForgetJobDir(const std::filesystem::path& data_dir, const std::string& registry,
                    const std::string& job_id);

// The checks every executor makes first, INVALID_ARGUMENT naming the field: a safe job id
// (1-200 of [A-Za-z0-9._-]), a job_dir, at least one replica, max_restarts >= 0, a positive
// timeout, worker pools 0-3 and no (pool, replica) twice.
Status ValidateGangBasics(const GangSpec& spec);

// DATA_LOSS when a persisted gang's replicas (pool, replica) differ from the spec's, in order.
Status CheckSameReplicas(const GangSpec& spec, const std::vector<std::pair<int, int>>& persisted,
                         const std::string& state_file);

// A helper binary the executor starts (trainyard-exec-wrapper, trainyard-slurm-task): the
// configured path if set (NOT_FOUND if it is not executable), else $<env_var>, next to
// /proc/self/exe, `build_path` (the build tree; may be empty), then PATH. NOT_FOUND naming what
// was tried and the fix otherwise. The result is absolute.
StatusOr<std::filesystem::path> FindHelperBinary(const std::string& name,
                                                 const std::filesystem::path& configured,
                                                 const char* env_var,
                                                 const std::filesystem::path& build_path);

}  // namespace trainyard::executor
