#include "executor/run_as.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/beneath.h"
#include "common/bucket_path.h"
#include "common/file_owner.h"
#include "common/file_util.h"
#include "replica_contract/replica_contract.h"

namespace trainyard::executor {
namespace fs = std::filesystem;

namespace {

std::string Who(const RunAs& r) {
  return "user '" + r.user + "' (uid " + std::to_string(r.uid) + ")";
}

// The rwx bits (0..7) the kernel applies to `r` on a file with `st`: the owner's, else the
// group's (primary or supplementary), else the others'.
unsigned BitsFor(const struct stat& st, const RunAs& r) {
  if (st.st_uid == r.uid) return (st.st_mode >> 6) & 07;
  bool in_group = st.st_gid == r.gid;
  for (uint32_t g : r.groups) in_group |= st.st_gid == g;
  return in_group ? (st.st_mode >> 3) & 07 : st.st_mode & 07;
}

fs::path Normal(const fs::path& p) {
  fs::path n = fs::absolute(p).lexically_normal();
  return n.has_filename() || n == n.root_path() ? n : n.parent_path();
}

bool AtOrBelow(const fs::path& dir, const fs::path& base) {
  auto [b, d] = std::mismatch(base.begin(), base.end(), dir.begin(), dir.end());
  return b == base.end();
}

// The refusal of an output dir `run_as` cannot write (`writes`), or cannot pass through on its way
// to `target`.
Status Refuse(const fs::path& dir, const struct stat& st, const RunAs& r, bool writes,
              const fs::path& target) {
  const std::string d = dir.string();
  std::string fix = "chown " + r.user + " " + d;
  if (r.bucket_group) {
    fix += ", or give it to the bucket group: chgrp " + GroupName(*r.bucket_group) + " " + d +
           " && chmod 2775 " + d;
  }
  if (!writes) fix = "chmod o+x " + d;
  const std::string what = writes ? "write " + d + ": it" : "reach " + target.string() + ": " + d;
  return FailedPreconditionError(Who(r) + ", who runs this job's replicas, cannot " + what +
                                 " is " + OwnerAndMode(st) + ". Fix it (" + fix +
                                 ") or use another baseOutputDirectory (docs/security.md)");
}

// `dir` relative to the bucket root `root` when it lies strictly beneath it, else "".
std::string BeneathRoot(const fs::path& dir, const fs::path& root) {
  if (dir == root || !AtOrBelow(dir, root)) return "";
  return dir.lexically_relative(root).string();
}

// Makes the missing directories on the way to each of `dirs` (ReplicaOutputDirs order) for `r`.
// Beneath the bucket root through BeneathDir: replicas write there, so no link is followed (a
// job's `ln -s /etc bkt/out` fails the next start instead of making the server create and give
// away /etc/x), and each directory is handed over by its fd. Outside the bucket root (an
// absolute local baseOutputDirectory) the server makes nothing: what is missing there the
// replica makes itself, as its own user, so the kernel decides what it may create.
Status MakeOutputDirs(const std::vector<fs::path>& dirs, const RunAs& r) {
  const gid_t group = r.bucket_group.value_or(r.gid);
  const fs::path root = Normal(BucketRoot());
  std::optional<BeneathDir> root_dir;
  for (const fs::path& dir : dirs) {
    const std::string rel = BeneathRoot(dir, root);
    if (rel.empty()) continue;
    if (!root_dir) {
      TY_RETURN_IF_ERROR(MakeDirs(root));  // the operator's path (made at start-up already)
      TY_ASSIGN_OR_RETURN(root_dir, BeneathDir::Open(root));
    }
    auto made = root_dir->MakeDirs(rel, 0775, [&](int fd, const std::string& made_rel) {
      const uid_t owner = AtOrBelow(root / made_rel, dirs.front()) ? r.uid : uid_t(-1);
      // chmod after chown: the setgid bit must survive the change of group.
      if (::fchown(fd, owner, group) != 0 || ::fchmod(fd, 02775) != 0) {
        return InternalError("cannot give gs://" + made_rel + " to " + Who(r) + " and group " +
                             GroupName(group) + ": " + std::strerror(errno));
      }
      return Status::Ok();
    });
    if (!made.ok()) {
      return FailedPreconditionError("cannot prepare the output directory gs://" + rel + ": " +
                                     made.status().message());
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<RunAs> LookUpUser(const std::string& user) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  int err = ::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found);
  if (err != 0) return InternalError("looking up user '" + user + "': " + std::strerror(err));
  if (found == nullptr) return NotFoundError("no Unix user '" + user + "' on this host");
  RunAs r;
  r.user = user;
  r.uid = pw.pw_uid;
  r.gid = pw.pw_gid;
  r.home = pw.pw_dir ? pw.pw_dir : "/";
  int count = 64;
  std::vector<gid_t> groups(count);
  if (::getgrouplist(user.c_str(), pw.pw_gid, groups.data(), &count) < 0) {
    groups.resize(count);
    ::getgrouplist(user.c_str(), pw.pw_gid, groups.data(), &count);
  }
  groups.resize(count);
  for (gid_t g : groups) {
    if (g != pw.pw_gid) r.groups.push_back(g);
  }
  return r;
}

Status MakeReplicaDir(const fs::path& dir, const std::optional<RunAs>& run_as) {
  TY_RETURN_IF_ERROR(MakeDirs(dir));
  if (!run_as) return Status::Ok();
  // Opened without following a link, then changed through the fd: the replica of an earlier
  // attempt owned the directory and may have left anything there.
  TY_ASSIGN_OR_RETURN(BeneathDir parent, BeneathDir::Open(dir.parent_path()));
  TY_ASSIGN_OR_RETURN(BeneathDir opened, parent.OpenDir(dir.filename().string()));
  struct stat st {};
  if (::fstat(opened.fd(), &st) != 0) {
    return InternalError("cannot stat " + dir.string() + ": " + std::strerror(errno));
  }
  // Made by the server (now, or for an earlier attempt): the replica's own, and only its own
  // (0700): other jobs' replicas, also of another project mapped to another user, cannot read it
  // even when they know the job id. A directory another user owns is left as it is; the replica
  // then writes there only if that user let it.
  const bool ours = st.st_uid == ::geteuid();
  if (!ours && st.st_uid != run_as->uid) return Status::Ok();
  if ((ours && ::fchown(opened.fd(), run_as->uid, run_as->gid) != 0) ||
      ::fchmod(opened.fd(), 0700) != 0) {
    return InternalError("cannot give " + dir.string() + " to " + Who(*run_as) + ": " +
                         std::strerror(errno));
  }
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
  // Checked again at every start: a directory may have changed since the job was created. A
  // bucket deleted since is not made anew: buckets come only from an explicit create.
  if (Status bucket = CheckBucketExists(in.base_output_dir); !bucket.ok()) {
    return FailedPreconditionError(bucket.message());
  }
  TY_RETURN_IF_ERROR(CheckOutputDirs(in.base_output_dir, in.trial_id, *run_as));
  TY_ASSIGN_OR_RETURN(std::vector<fs::path> dirs,
                      ReplicaOutputDirs(in.base_output_dir, in.trial_id));
  return MakeOutputDirs(dirs, *run_as);
}

StatusOr<std::vector<fs::path>> ReplicaOutputDirs(const std::string& base_output_dir,
                                                  const std::string& trial_id) {
  std::vector<fs::path> out;
  if (base_output_dir.empty()) return out;
  TY_ASSIGN_OR_RETURN(fs::path base, ResolveStoragePath(base_output_dir));
  out.push_back(Normal(base));
  if (!trial_id.empty()) out.push_back(out.front() / trial_id);
  const replica_contract::OutputDirs dirs =
      replica_contract::OutputDirsFor(base_output_dir, trial_id);
  for (const std::string& uri : {dirs.model_dir, dirs.checkpoint_dir, dirs.tensorboard_log_dir}) {
    TY_ASSIGN_OR_RETURN(fs::path local, ResolveStoragePath(uri));
    out.push_back(Normal(local));
  }
  return out;
}

// What `part` (a directory on the way to an output dir) is, as the kernel will resolve it for the
// replica: beneath the bucket root without following links (a link there is refused: the
// server never follows one), above it or outside it as the operator's path.
StatusOr<struct stat> StatOnTheWay(const fs::path& part, const fs::path& root,
                                   const std::optional<BeneathDir>& root_dir) {
  const std::string rel = BeneathRoot(part, root);
  if (!rel.empty() && root_dir) {
    auto st = root_dir->Stat(rel);
    if (st.ok() && S_ISLNK(st->st_mode)) {
      return FailedPreconditionError("gs://" + rel +
                                     " is a symbolic link; links in buckets are never followed "
                                     "(docs/security.md): remove it or use another "
                                     "baseOutputDirectory");
    }
    return st;
  }
  struct stat st {};
  if (::stat(part.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFoundError(part.string());
    return FailedPreconditionError("cannot stat " + part.string() + ": " + std::strerror(errno));
  }
  return st;
}

Status CheckOutputDirs(const std::string& base_output_dir, const std::string& trial_id,
                       const RunAs& run_as) {
  if (run_as.uid == 0) return Status::Ok();
  TY_ASSIGN_OR_RETURN(std::vector<fs::path> dirs, ReplicaOutputDirs(base_output_dir, trial_id));
  const fs::path root = Normal(BucketRoot());
  std::optional<BeneathDir> root_dir;
  if (auto opened = BeneathDir::Open(root); opened.ok()) root_dir = std::move(opened).value();
  for (const fs::path& dir : dirs) {
    fs::path walked;
    for (const fs::path& part : dir) {
      walked /= part;
      auto st = StatOnTheWay(walked, root, root_dir);
      if (!st.ok()) {
        if (st.status().code() == StatusCode::kNotFound) break;  // made at the start
        return st.status();
      }
      if (!S_ISDIR(st->st_mode)) {
        return FailedPreconditionError(walked.string() +
                                       " is not a directory; remove it or use "
                                       "another baseOutputDirectory");
      }
      const bool writes = AtOrBelow(walked, dirs.front());
      const unsigned need = writes ? 03 : 01;  // w and x in it, or x to pass through
      if ((BitsFor(*st, run_as) & need) != need) return Refuse(walked, *st, run_as, writes, dir);
    }
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
      return FailedPreconditionError(Who(run_as) + " cannot reach " + dir.string() + ": " +
                                     walked.string() + " is mode " + ModeString(st.st_mode) +
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
  nlohmann::json j = {{"user", r.user},
                      {"uid", r.uid},
                      {"gid", r.gid},
                      {"groups", r.groups},
                      {"home", r.home.string()}};
  if (r.bucket_group) j["bucket_group"] = *r.bucket_group;
  return j;
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
    if (j.contains("bucket_group")) r.bucket_group = j.at("bucket_group").get<uint32_t>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("run_as: ") + e.what());
  }
  return r;
}

}  // namespace trainyard::executor
