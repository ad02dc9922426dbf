#include "executor/replica_status_file.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/json_parse.h"
#include "executor/job_log.h"

namespace trainyard::executor {

namespace fs = std::filesystem;

Status WriteReplicaStatusFile(const fs::path& path, int exit_code,
                              std::chrono::system_clock::time_point end_time) {
  nlohmann::json j{{"exit_code", exit_code}, {"end_time", FormatLogTime(end_time)}};
  return WriteFileAtomic(path, j.dump() + "\n");
}

StatusOr<ReplicaExit> ReadReplicaStatusFile(const fs::path& path) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    const nlohmann::json j = ParseJsonOrThrow(text);
    return ReplicaExit{j.at("exit_code").get<int>(), j.value("end_time", "")};
  } catch (const std::exception& e) {
    return DataLossError("corrupt replica status file " + path.string() + ": " + e.what());
  }
}

std::optional<std::chrono::system_clock::time_point> ExitTimeOf(const ReplicaExit& exit) {
  if (exit.end_time.empty()) return std::nullopt;
  auto t = ParseTimestamp(exit.end_time);
  if (!t.ok()) return std::nullopt;
  return *t;
}

}  // namespace trainyard::executor
