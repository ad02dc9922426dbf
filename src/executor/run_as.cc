#include "executor/run_as.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "replica_contract/replica_contract.h"

namespace trainyard::executor {
namespace fs = std::filesystem;

namespace {

Status Chown(const fs::path& dir, const RunAs& run_as) {
  if (::chown(dir.c_str(), run_as.uid, run_as.gid) != 0) {
    return InternalError("cannot give " + dir.string() + " to user '" + run_as.user + "' (uid " +
                         std::to_string(run_as.uid) + "): " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Status MakeReplicaDir(const fs::path& dir, const std::optional<RunAs>& run_as) {
  TY_RETURN_IF_ERROR(MakeDirs(dir));
  if (!run_as) return Status::Ok();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return InternalError("cannot stat " + dir.string() + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return InternalError(dir.string() + " exists and is not a directory");
  // Made by the server (now, or for an earlier attempt): the replica's own. A directory another
  // user owns is left as it is; the replica then writes there only if that user let it.
  if (st.st_uid != run_as->uid && st.st_uid == ::geteuid()) return Chown(dir, *run_as);
  return Status::Ok();
}

Status PrepareReplicaDirs(const fs::path& work_dir, const ReplicaEnvInput& in,
                          const std::optional<RunAs>& run_as) {
  TY_RETURN_IF_ERROR(MakeReplicaDir(work_dir, run_as));
  if (!in.hp_metric_file.empty()) {
    TY_RETURN_IF_ERROR(MakeReplicaDir(in.hp_metric_file.parent_path(), run_as));
  }
  // Only a replica of another user needs them made for it; one running as the server's user
  // creates them itself, as before.
  if (!run_as) return Status::Ok();
  const replica_contract::OutputDirs dirs =
      replica_contract::OutputDirsFor(in.base_output_dir, in.trial_id);
  for (const std::string& uri : {dirs.model_dir, dirs.checkpoint_dir, dirs.tensorboard_log_dir}) {
    if (uri.empty()) continue;
    TY_ASSIGN_OR_RETURN(fs::path local, ResolveStoragePath(uri));
    TY_RETURN_IF_ERROR(MakeReplicaDir(local, run_as));
  }
  return Status::Ok();
}

Status CheckCanReach(const fs::path& dir, const RunAs& run_as) {
  if (run_as.uid == 0) return Status::Ok();
  fs::path walked;
  for (const fs::path& part : fs::absolute(dir).lexically_normal()) {
    walked /= part;
    if (part.empty()) continue;  // a trailing separator
    struct stat st {};
    if (::stat(walked.c_str(), &st) != 0) {
      return FailedPreconditionError("cannot stat " + walked.string() + ": " +
                                     std::strerror(errno));
    }
    bool in_group = st.st_gid == run_as.gid;
    for (uint32_t g : run_as.groups) in_group |= st.st_gid == g;
    const mode_t bit = st.st_uid == run_as.uid ? S_IXUSR : in_group ? S_IXGRP : S_IXOTH;
    if ((st.st_mode & bit) == 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return FailedPreconditionError("user '" + run_as.user + "' (uid " +
                                     std::to_string(run_as.uid) + ") cannot reach " + dir.string() +
                                     ": " + walked.string() + " is mode " + mode +
                                     ", owned by uid " + std::to_string(st.st_uid));
    }
  }
  return Status::Ok();
}

Status HideJobFiles(const fs::path& job_dir, const fs::path& log_dir) {
  for (const auto& [dir, mode] : {std::pair{job_dir, 0711}, std::pair{log_dir, 0700}}) {
    TY_RETURN_IF_ERROR(MakeDirs(dir));
    if (::chmod(dir.c_str(), static_cast<mode_t>(mode)) != 0) {
      return InternalError("cannot chmod " + dir.string() + ": " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

void ApplyIdentityEnv(const std::optional<RunAs>& run_as, EnvMap* inherited) {
  if (!run_as) return;
  (*inherited)["HOME"] = run_as->home.empty() ? "/" : run_as->home.string();
  (*inherited)["USER"] = run_as->user;
  (*inherited)["LOGNAME"] = run_as->user;
}

nlohmann::json RunAsToJson(const RunAs& r) {
  return {{"user", r.user},
          {"uid", r.uid},
          {"gid", r.gid},
          {"groups", r.groups},
          {"home", r.home.string()}};
}

StatusOr<RunAs> RunAsFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgumentError("run_as: expected an object");
  RunAs r;
  try {
    r.user = j.at("user").get<std::string>();
    r.uid = j.at("uid").get<uint32_t>();
    r.gid = j.at("gid").get<uint32_t>();
    r.groups = j.value("groups", std::vector<uint32_t>{});
    r.home = j.value("home", std::string());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("run_as: ") + e.what());
  }
  return r;
}

}  // namespace trainyard::executor
