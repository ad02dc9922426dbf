#include "slurm/slurm_executor_state.h"

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/json_parse.h"

namespace trainyard::slurm {
namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string SerializeSlurmGang(const SlurmExecutor::Gang& g) {
  Json j;
  j["version"] = 1;
  j["job_id"] = g.spec.job_id;
  j["attempt"] = g.attempt;
  j["slurm_job_id"] = g.slurm_job_id;
  j["resubmit_pending"] = g.resubmit_pending;
  if (g.resubmit_at) {
    j["resubmit_at_us"] = executor::ToUnixMicros(*g.resubmit_at);
    j["restart_note"] = g.restart_note;
  }
  j["submitting"] = g.submitting;
  j["done"] = g.done;
  executor::GangRecordToJson(g, &j);
  j["slurm_state"] = g.slurm_state;
  j["slurm_reason"] = g.slurm_reason;
  j["log_cursors"] = g.log_cursors;
  j["batch_out_offset"] = g.batch_out_offset;
  Json replicas = Json::array();
  for (const auto& r : g.replicas) {
    Json rj{{"pool", r.pool_index},
            {"replica", r.replica_index},
            {"pid", r.pid},
            {"end_time", r.end_time}};
    rj["exit_code"] = r.exit_code ? Json(*r.exit_code) : Json(nullptr);
    replicas.push_back(std::move(rj));
  }
  j["replicas"] = std::move(replicas);
  return j.dump(1) + "\n";
}

Status SaveSlurmGang(const SlurmExecutor::Gang& gang) {
  return WriteFileAtomic(executor::SlurmStateFile(gang.spec.job_dir), SerializeSlurmGang(gang));
}

StatusOr<SlurmExecutor::Gang> LoadSlurmGang(const fs::path& job_dir) {
  fs::path path = executor::SlurmStateFile(job_dir);
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  SlurmExecutor::Gang g;
  try {
    Json j = ParseJsonOrThrow(text);
    g.spec.job_id = j.at("job_id").get<std::string>();
    g.spec.job_dir = job_dir;
    g.attempt = j.at("attempt").get<int>();
    g.slurm_job_id = j.at("slurm_job_id").get<std::string>();
    g.resubmit_pending = j.at("resubmit_pending").get<bool>();
    if (j.contains("resubmit_at_us")) {  // absent before the restart backoff
      g.resubmit_at = executor::FromUnixMicros(j["resubmit_at_us"].get<int64_t>());
      g.restart_note = j.value("restart_note", "");
    }
    g.submitting = j.value("submitting", false);  // absent in state files of older versions
    g.done = j.at("done").get<bool>();
    // What "stop_goal" numbers meant in state files written before the one StopGoal enum.
    static const std::vector<executor::StopGoal> kLegacyGoals = {
        executor::StopGoal::kNone, executor::StopGoal::kCancel, executor::StopGoal::kSucceed,
        executor::StopGoal::kTimeout};
    executor::GangRecordFromJson(j, kLegacyGoals, &g);
    g.slurm_state = j.at("slurm_state").get<std::string>();
    g.slurm_reason = j.at("slurm_reason").get<std::string>();
    g.log_cursors = j.at("log_cursors").get<std::map<std::string, int64_t>>();
    g.batch_out_offset = j.at("batch_out_offset").get<int64_t>();
    for (const auto& rj : j.at("replicas")) {
      SlurmReplica r;
      r.pool_index = rj.at("pool").get<int>();
      r.replica_index = rj.at("replica").get<int>();
      r.pid = rj.at("pid").get<int64_t>();
      r.end_time = rj.value("end_time", "");
      if (!rj.at("exit_code").is_null()) r.exit_code = rj["exit_code"].get<int>();
      g.replicas.push_back(r);
    }
  } catch (const std::exception& e) {
    return DataLossError("corrupt Slurm executor state " + path.string() + ": " + e.what());
  }
  return g;
}

executor::GangStatus SlurmGangStatus(const SlurmExecutor::Gang& g) {
  executor::GangStatus s = executor::StatusOfRecord(g.spec.job_id, g);
  s.waiting_note = g.waiting_note;
  for (const auto& r : g.replicas) {
    executor::ReplicaStatus rs;
    rs.pool_index = r.pool_index;
    rs.replica_index = r.replica_index;
    rs.pid = (r.exit_code || g.done) ? 0 : r.pid;
    rs.exit_code = r.exit_code;
    rs.restarts = g.restarts_used;
    if (g.resubmit_pending && g.resubmit_at) {
      rs.restart_at = g.resubmit_at;
      rs.restart_note = g.restart_note;
    }
    s.replicas.push_back(rs);
  }
  return s;
}

std::optional<std::chrono::system_clock::time_point> ExitTimeOf(const SlurmReplica& r) {
  if (r.end_time.empty()) return std::nullopt;
  auto t = ParseTimestamp(r.end_time);
  return t.ok() ? std::optional(*t) : std::nullopt;
}

std::optional<std::chrono::system_clock::time_point> LastExitOf(const SlurmExecutor::Gang& g) {
  std::optional<std::chrono::system_clock::time_point> last;
  for (const auto& r : g.replicas) {
    auto t = r.exit_code ? ExitTimeOf(r) : std::nullopt;
    if (!t) return std::nullopt;
    if (!last || *t > *last) last = t;
  }
  return last;
}

}  // namespace trainyard::slurm
