#include "local_executor/local_executor_state.h"

#include <nlohmann/json.hpp>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "common/json_parse.h"
#include "executor/replica_env.h"

namespace trainyard::executor {
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// What "stop_goal" numbers meant in state files written before the one StopGoal enum.
const std::vector<StopGoal> kLegacyGoals = {StopGoal::kNone,    StopGoal::kSucceed,
                                            StopGoal::kFail,    StopGoal::kCancel,
                                            StopGoal::kTimeout, StopGoal::kRestartGang};

Json CgroupStrings(const std::vector<fs::path>& dirs) {
  Json out = Json::array();
  for (const auto& d : dirs) out.push_back(d.string());
  return out;
}

// "cgroups" (a list), or the one "cgroup" of state files written before cgroup v1 support.
std::vector<fs::path> CgroupPaths(const Json& replica) {
  std::vector<fs::path> out;
  if (replica.contains("cgroups")) {
    for (const auto& d : replica.at("cgroups")) out.push_back(d.get<std::string>());
  } else if (!replica.value("cgroup", std::string()).empty()) {
    out.push_back(replica.at("cgroup").get<std::string>());
  }
  return out;
}

}  // namespace

GangStatus StatusFromGang(const LocalExecutor::Gang& gang) {
  GangStatus s = StatusOfRecord(gang.spec.job_id, gang);
  s.waiting_note = gang.waiting_note;
  for (const auto& r : gang.replicas) {
    ReplicaStatus rs;
    rs.pool_index = r.pool_index;
    rs.replica_index = r.replica_index;
    rs.pid = r.running ? r.handle.process.pid : 0;
    rs.exit_code = r.running ? std::nullopt : r.exit_code;
    rs.restarts = r.restarts;
    rs.restart_at = r.restart_at;
    rs.restart_note = r.restart_note;
    s.replicas.push_back(rs);
  }
  return s;
}

EnvMap InheritedReplicaEnv() {
  EnvMap env = CurrentEnvironment();
  env["TRAINYARD_BUCKET_ROOT"] = fs::absolute(BucketRoot()).string();
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string& path = env["PATH"];
    if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
    path += ":" + self.parent_path().string();
  }
  return env;
}

std::string SerializeGang(const LocalExecutor::Gang& g) {
  Json j;
  j["version"] = 1;
  j["job_id"] = g.spec.job_id;
  GangRecordToJson(g, &j);
  Json replicas = Json::array();
  for (const auto& r : g.replicas) {
    Json rj{{"pool", r.pool_index},
            {"replica", r.replica_index},
            {"gpus", r.gpus},
            {"cpus", r.cpus},
            {"cgroups", CgroupStrings(r.cgroups)},
            {"port", r.port},
            {"attempt", r.attempt},
            {"restarts", r.restarts},
            {"wrapper_pid", r.handle.supervisor.pid},
            {"wrapper_ticks", r.handle.supervisor.start_ticks},
            {"pid", r.handle.process.pid},
            {"ticks", r.handle.process.start_ticks},
            {"container", r.handle.container},
            {"running", r.running},
            {"done", r.done},
            {"lost_reason", r.lost_reason}};
    rj["exit_code"] = r.exit_code ? Json(*r.exit_code) : Json(nullptr);
    if (r.end_time) rj["end_time_us"] = ToUnixMicros(*r.end_time);
    if (r.restart_at) {
      rj["restart_at_us"] = ToUnixMicros(*r.restart_at);
      rj["restart_note"] = r.restart_note;
    }
    replicas.push_back(std::move(rj));
  }
  j["replicas"] = std::move(replicas);
  return j.dump(1) + "\n";
}

Status SaveGangState(const LocalExecutor::Gang& gang, bool durable) {
  fs::path path = LocalStateFile(gang.spec.job_dir);
  return durable ? WriteFileAtomic(path, SerializeGang(gang))
                 : ReplaceFile(path, SerializeGang(gang));
}

StatusOr<PersistedGang> LoadGangState(const fs::path& job_dir) {
  fs::path path = LocalStateFile(job_dir);
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  PersistedGang out;
  LocalExecutor::Gang& g = out.gang;
  try {
    Json j = ParseJsonOrThrow(text);
    g.spec.job_id = j.at("job_id").get<std::string>();
    g.spec.job_dir = job_dir;
    GangRecordFromJson(j, kLegacyGoals, &g);
    for (const auto& rj : j.at("replicas")) {
      LocalExecutor::Replica r;
      r.pool_index = rj.at("pool").get<int>();
      r.replica_index = rj.at("replica").get<int>();
      r.gpus = rj.at("gpus").get<std::vector<int>>();
      // Absent in state files written before CPUs were placed and cgroups were used.
      r.cpus = rj.value("cpus", std::vector<int>{});
      r.cgroups = CgroupPaths(rj);
      r.port = rj.at("port").get<int>();
      r.attempt = rj.at("attempt").get<int>();
      r.restarts = rj.at("restarts").get<int>();
      r.handle.supervisor = {rj.at("wrapper_pid").get<int64_t>(),
                             rj.at("wrapper_ticks").get<uint64_t>()};
      r.handle.process = {rj.at("pid").get<int64_t>(), rj.at("ticks").get<uint64_t>()};
      r.handle.container = rj.value("container", std::string());  // absent before containers
      r.handle.pid_file =
          ReplicaAttemptFile(job_dir, r.pool_index, r.replica_index, r.attempt, "pid");
      r.handle.status_file =
          ReplicaAttemptFile(job_dir, r.pool_index, r.replica_index, r.attempt, "status");
      r.running = rj.at("running").get<bool>();
      r.done = rj.at("done").get<bool>();
      r.lost_reason = rj.at("lost_reason").get<std::string>();
      if (!rj.at("exit_code").is_null()) r.exit_code = rj["exit_code"].get<int>();
      // Absent in state files written before exit times and the restart backoff.
      if (rj.contains("end_time_us")) r.end_time = FromUnixMicros(rj["end_time_us"].get<int64_t>());
      if (rj.contains("restart_at_us")) {
        r.restart_at = FromUnixMicros(rj["restart_at_us"].get<int64_t>());
        r.restart_note = rj.value("restart_note", std::string());
      }
      g.replicas.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    return DataLossError("corrupt executor state " + path.string() + ": " + e.what());
  }
  out.status = StatusFromGang(g);
  return out;
}

}  // namespace trainyard::executor
