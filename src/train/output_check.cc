#include "train/output_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <system_error>

#include "common/file_owner.h"
#include "common/file_util.h"

namespace trainyard::train {
namespace fs = std::filesystem;
namespace {

// "dir/" names "dir" (AIP_* values end in '/').
fs::path WithoutTrailingSlash(const fs::path& p) {
  return p.has_filename() || !p.has_parent_path() ? p : p.parent_path();
}

// The deepest directory on the way to `path` that exists: the one that refused a creation.
fs::path DeepestExisting(fs::path path) {
  std::error_code ec;
  while (!path.empty() && !fs::exists(path, ec) && path != path.parent_path()) {
    path = path.parent_path();
  }
  return path;
}

Status Refused(const std::string& flag, const fs::path& dir, const std::string& failure,
               const fs::path& culprit) {
  return FailedPreconditionError(
      flag + " " + dir.string() + ": " + failure + "; " + culprit.string() + " is " +
      OwnerAndMode(culprit) + ", and this process runs as " + ProcessIdentity() +
      ". Fix: let uid " + std::to_string(::geteuid()) + " write " + culprit.string() +
      " (chown it, or chgrp a group this process has and chmod g+ws), or pass another " + flag);
}

// Creates and removes the staging directory a commit to `target` makes beside it.
Status ProbeStaging(const std::string& flag, const fs::path& dir, const fs::path& target) {
  StatusOr<fs::path> staging = MakeStagingDir(target);
  if (!staging.ok()) {
    return Refused(flag, dir, staging.status().message(), DeepestExisting(target.parent_path()));
  }
  std::error_code ec;
  fs::remove(*staging, ec);
  return Status::Ok();
}

}  // namespace

Status CheckExportDir(const std::string& flag, const fs::path& dir_in) {
  const fs::path dir = WithoutTrailingSlash(dir_in);
  TY_RETURN_IF_ERROR(ProbeStaging(flag, dir, dir));
  // CommitDirectory renames a previous export aside; in a sticky parent (/tmp) only the owner of
  // the export or of the parent may (rename(2) EPERM otherwise).
  struct stat parent {
  }, existing{};
  const fs::path parent_dir = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  const uid_t self = ::geteuid();
  if (::stat(dir.c_str(), &existing) == 0 && ::stat(parent_dir.c_str(), &parent) == 0 &&
      (parent.st_mode & S_ISVTX) != 0 && self != 0 && self != existing.st_uid &&
      self != parent.st_uid) {
    return FailedPreconditionError(flag + " " + dir.string() +
                                   ": the export replaces it, but it is " + OwnerAndMode(existing) +
                                   " in the sticky directory " + parent_dir.string() +
                                   ", where only its owner may move it, and this process runs as " +
                                   ProcessIdentity() + ". Fix: remove it or give it to uid " +
                                   std::to_string(self) + " (chown), or pass another " + flag);
  }
  return Status::Ok();
}

Status CheckOutputDir(const std::string& flag, const fs::path& dir_in) {
  const fs::path dir = WithoutTrailingSlash(dir_in);
  if (Status made = MakeDirs(dir); !made.ok()) {
    return Refused(flag, dir, made.message(), DeepestExisting(dir));
  }
  return ProbeStaging(flag, dir, dir / ".trainyard-write-check");
}

}  // namespace trainyard::train
