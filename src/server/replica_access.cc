#include "server/replica_access.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "executor/run_as.h"

namespace trainyard::server {
namespace {

// Replicas of several users write into the same buckets (as Vertex's service accounts may): the
// bucket root gets the bucket group and setgid, and the server's umask becomes 002, so every
// bucket and folder made under it is writable by that group, which replica users get as a
// supplementary group. The root itself is not group-writable: buckets are made only through the
// Storage API (buckets.insert), never by a replica, and nobody but the server renames or removes
// its entries (the buckets, the store's .trainyard-* directories). The group's id, or nullopt
// when there is none.
StatusOr<std::optional<uint32_t>> ShareBucketRoot(const ReplicaAccessOptions& o,
                                                  std::ostream& log) {
  const std::string name = o.bucket_group.value_or("trainyard");
  if (name.empty()) return std::optional<uint32_t>();
  const group* g = ::getgrnam(name.c_str());
  if (g == nullptr) {
    if (o.bucket_group) {
      return InvalidArgumentError("--bucket-group: no group '" + name +
                                  "' on this host (create it: groupadd --system " + name + ")");
    }
    log << "no group 'trainyard': replicas of other users can write only their own "
           "directories in buckets (create it with `groupadd --system trainyard`, "
           "docs/security.md)\n";
    return std::optional<uint32_t>();
  }
  const std::filesystem::path root = BucketRoot();
  if (::chown(root.c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0 ||
      ::chmod(root.c_str(), 02755) != 0) {
    return FailedPreconditionError("cannot give the bucket root " + root.string() + " to group '" +
                                   name + "': " + std::strerror(errno));
  }
  ::umask(002);
  return std::optional<uint32_t>(g->gr_gid);
}

// With fs.protected_hardlinks off, a replica can hard-link a file it cannot read (/etc/shadow,
// the server's databases) into a bucket where, being a regular file, the Storage API serves it.
void WarnAboutHardLinks(std::ostream& log) {
  auto text = ReadFile("/proc/sys/fs/protected_hardlinks");
  if (text.ok() && !text->empty() && (*text)[0] == '0') {
    log << "warning: fs.protected_hardlinks is 0: a replica can hard-link files it cannot read "
           "into a bucket, and the Storage API would serve them. Set `sysctl -w "
           "fs.protected_hardlinks=1` (Debian's default) or keep the bucket root on a file "
           "system of its own (docs/security.md)\n";
  }
}

Status CheckReplicasReach(const controller::ReplicaUsers& users, const DataDir& data_dir) {
  for (const executor::RunAs& id : users.OtherIdentities()) {
    for (const std::filesystem::path& dir : {data_dir.jobs_dir(), BucketRoot()}) {
      if (Status s = executor::CheckCanReach(dir, id); !s.ok()) {
        return FailedPreconditionError(
            s.message() + ". Replicas run as '" + id.user +
            "': use a --data-dir (and TRAINYARD_BUCKET_ROOT) that user can reach, e.g. under "
            "/var/lib or /srv, map replicas to another user with --service-accounts, or allow "
            "root replicas with --allow-root-replicas (docs/security.md)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<controller::ReplicaUsers> LoadReplicaUsers(const ReplicaAccessOptions& options,
                                                    const DataDir& data_dir, std::ostream& log) {
  controller::ReplicaUsersOptions opts;
  opts.table_file = options.service_accounts;
  opts.allow_root = options.allow_root_replicas;
  opts.server_uid = ::geteuid();
  if (const passwd* pw = ::getpwuid(opts.server_uid)) {
    opts.server_user = pw->pw_name;
  } else {
    return FailedPreconditionError("the server's uid " + std::to_string(opts.server_uid) +
                                   " has no user name (getpwuid)");
  }
  TY_RETURN_IF_ERROR(MakeDirs(BucketRoot()));
  if (opts.server_uid == 0) {
    TY_ASSIGN_OR_RETURN(opts.shared_group, ShareBucketRoot(options, log));
  }
  if (opts.server_uid == 0) WarnAboutHardLinks(log);
  TY_ASSIGN_OR_RETURN(controller::ReplicaUsers users, controller::ReplicaUsers::Load(opts));
  if (!options.runs_replicas) return users;
  if (!users.OtherIdentities().empty()) TY_RETURN_IF_ERROR(data_dir.LetOthersPassThrough());
  TY_RETURN_IF_ERROR(CheckReplicasReach(users, data_dir));
  return users;
}

}  // namespace trainyard::server
