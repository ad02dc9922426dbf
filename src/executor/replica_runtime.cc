#include "executor/replica_runtime.h"

#include "common/file_util.h"
#include "common/json_parse.h"

namespace trainyard::executor {

std::filesystem::path StartErrorFile(const std::filesystem::path& pid_file) {
  return pid_file.parent_path() / (pid_file.stem().string() + ".container-error");
}

StatusOr<StartError> ReadStartError(const std::filesystem::path& pid_file) {
  const std::filesystem::path path = StartErrorFile(pid_file);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFoundError("no " + path.string());
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  StatusOr<nlohmann::json> j = ParseJson(text);
  if (!j.ok() || !j->is_object() || !j->contains("failure") || !(*j)["failure"].is_string() ||
      !j->contains("message") || !(*j)["message"].is_string()) {
    return DataLossError("corrupt start-error file " + path.string());
  }
  StartError error;
  error.failure = (*j)["failure"] == "IMAGE_UNAVAILABLE" ? GangFailure::kImageUnavailable
                                                         : GangFailure::kStartFailed;
  error.message = (*j)["message"].get<std::string>();
  return error;
}

Status WriteStartError(const std::filesystem::path& pid_file, const StartError& error) {
  const nlohmann::json j{{"failure", GangFailureName(error.failure)}, {"message", error.message}};
  return WriteFileAtomic(StartErrorFile(pid_file), j.dump() + "\n");
}

}  // namespace trainyard::executor
