#include "executor/gang_record.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "common/file_util.h"
#include "executor/replica_env.h"

namespace trainyard::executor {
namespace fs = std::filesystem;
using Json = nlohmann::json;

void GangRecordToJson(const GangRecord& g, Json* j) {
  (*j)["state"] = GangStateName(g.state);
  (*j)["restarts_used"] = g.restarts_used;
  if (g.start_time) (*j)["start_time_us"] = ToUnixMicros(*g.start_time);
  if (g.end_time) (*j)["end_time_us"] = ToUnixMicros(*g.end_time);
  (*j)["error_message"] = g.error_message;
  (*j)["stop_message"] = g.stop_message;
  (*j)["stop_started_us"] = ToUnixMicros(g.stop_started);
  (*j)["killed"] = g.killed;
  (*j)["failure"] = GangFailureName(g.failure);
  (*j)["stop_goal"] = StopGoalName(g.stop_goal);
  (*j)["stop_failure"] = GangFailureName(g.stop_failure);
  if (g.restart_due) (*j)["restart_due_us"] = ToUnixMicros(*g.restart_due);
}

void GangRecordFromJson(const Json& j, const std::vector<StopGoal>& legacy_goals, GangRecord* g) {
  g->state = GangStateFromName(j.at("state").get<std::string>()).value_or(GangState::kQueued);
  g->restarts_used = j.at("restarts_used").get<int>();
  if (j.contains("start_time_us"))
    g->start_time = FromUnixMicros(j["start_time_us"].get<int64_t>());
  if (j.contains("end_time_us")) g->end_time = FromUnixMicros(j["end_time_us"].get<int64_t>());
  g->error_message = j.at("error_message").get<std::string>();
  g->stop_message = j.at("stop_message").get<std::string>();
  g->stop_started = FromUnixMicros(j.at("stop_started_us").get<int64_t>());
  g->killed = j.at("killed").get<bool>();
  const Json& goal = j.at("stop_goal");
  if (goal.is_string()) {
    g->stop_goal = StopGoalFromName(goal.get<std::string>()).value_or(StopGoal::kNone);
  } else {
    size_t n = goal.get<size_t>();
    g->stop_goal = n < legacy_goals.size() ? legacy_goals[n] : StopGoal::kNone;
  }
  GangFailure old = g->state == GangState::kFailed      ? GangFailure::kReplicaFailed
                    : g->state == GangState::kCancelled ? GangFailure::kCancelled
                                                        : GangFailure::kNone;
  g->failure = GangFailureFromName(j.value("failure", "")).value_or(old);
  GangFailure old_stop = g->stop_goal == StopGoal::kTimeout  ? GangFailure::kTimeout
                         : g->stop_goal == StopGoal::kCancel ? GangFailure::kCancelled
                         : g->stop_goal == StopGoal::kFail   ? GangFailure::kReplicaFailed
                                                             : GangFailure::kNone;
  g->stop_failure = GangFailureFromName(j.value("stop_failure", "")).value_or(old_stop);
  if (j.contains("restart_due_us"))
    g->restart_due = FromUnixMicros(j["restart_due_us"].get<int64_t>());
}

namespace {

bool SafeJobId(const std::string& id) {
  if (id.empty() || id == "." || id == ".." || id.size() > 200) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

Status RegisterJobDir(const fs::path& data_dir, const std::string& registry,
                      const std::string& job_id, const fs::path& job_dir) {
  if (data_dir.empty()) return Status::Ok();
  std::string abs = fs::absolute(job_dir).string();
  fs::path entry = data_dir / registry / "jobs" / job_id;
  if (auto existing = ReadFile(entry); existing.ok() && *existing == abs) return Status::Ok();
  return ReplaceFile(entry, abs);
}

StatusOr<fs::path> LookupJobDir(const fs::path& data_dir, const std::string& registry,
                                const std::string& job_id) {
  if (data_dir.empty() || !SafeJobId(job_id)) {
    return NotFoundError("job " + job_id + " is not known to this executor");
  }
  auto text = ReadFile(data_dir / registry / "jobs" / job_id);
  if (!text.ok()) return NotFoundError("job " + job_id + " is not known to this executor");
  return fs::path(*text);
}

Status ForgetJobDir(const fs::path& data_dir, const std::string& registry,
                    const std::string& job_id) {
  if (data_dir.empty() || !SafeJobId(job_id)) return Status::Ok();
  const fs::path entry = data_dir / registry / "jobs" / job_id;
  if (::unlink(entry.c_str()) != 0 && errno != ENOENT) {
    return UnavailableError("cannot remove " + entry.string() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status ValidateGangBasics(const GangSpec& spec) {
  if (!SafeJobId(spec.job_id)) {
    return InvalidArgumentError("job id '" + spec.job_id +
                                "' must be 1-200 characters of letters, digits, '-', '_' or '.'");
  }
  if (spec.job_dir.empty()) return InvalidArgumentError("job " + spec.job_id + ": empty job_dir");
  if (spec.replicas.empty()) {
    return InvalidArgumentError(
        "workerPoolSpecs: the job has no replicas; workerPoolSpecs[0] needs replicaCount 1");
  }
  if (spec.max_restarts < 0) return InvalidArgumentError("max_restarts must be >= 0");
  if (spec.timeout && spec.timeout->count() <= 0) {
    return InvalidArgumentError("scheduling.timeout must be positive");
  }
  std::set<std::pair<int, int>> seen;
  for (const auto& r : spec.replicas) {
    std::string field = "workerPoolSpecs[" + std::to_string(r.pool_index) + "]";
    if (r.pool_index < 0 || r.pool_index > 3) {
      return InvalidArgumentError(field + ": Vertex has worker pools 0-3 only");
    }
    if (!seen.insert({r.pool_index, r.replica_index}).second || r.replica_index < 0) {
      return InvalidArgumentError(field + ": replica index " + std::to_string(r.replica_index) +
                                  " is negative or appears twice");
    }
  }
  return Status::Ok();
}

Status CheckSameReplicas(const GangSpec& spec, const std::vector<std::pair<int, int>>& persisted,
                         const std::string& state_file) {
  bool same = persisted.size() == spec.replicas.size();
  for (size_t i = 0; same && i < persisted.size(); ++i) {
    same =
        persisted[i] == std::make_pair(spec.replicas[i].pool_index, spec.replicas[i].replica_index);
  }
  if (same) return Status::Ok();
  return DataLossError("job " + spec.job_id + ": the replicas in " + spec.job_dir.string() + "/" +
                       state_file + " do not match the job's worker pools");
}

StatusOr<fs::path> FindHelperBinary(const std::string& name, const fs::path& configured,
                                    const char* env_var, const fs::path& build_path) {
  std::vector<fs::path> tried;
  auto usable = [&](const fs::path& p) {
    tried.push_back(p);
    return !p.empty() && ::access(p.c_str(), X_OK) == 0;
  };
  if (!configured.empty()) {
    if (usable(configured)) return fs::absolute(configured);
    return NotFoundError(name + " " + configured.string() + " is not an executable file");
  }
  if (const char* env = std::getenv(env_var); env && *env) {
    if (usable(env)) return fs::absolute(env);
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && usable(self.parent_path() / name)) return self.parent_path() / name;
  if (!build_path.empty() && usable(build_path)) return build_path;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      if (!dir.empty() && usable(fs::path(dir) / name)) return fs::absolute(fs::path(dir) / name);
    }
  }
  std::string list;
  for (const auto& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  return NotFoundError(name + " not found (tried " + list + "); build it or set " + env_var);
}

}  // namespace trainyard::executor
