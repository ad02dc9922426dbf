// ReplicaUsers: the Unix user a job's replicas run as, from the job's project and
// jobSpec.serviceAccount, through a table the administrator writes (`trainyard server
// --service-accounts FILE`, docs/security.md):
//
//   {"defaultUser": "trainyard",                       // optional
//    "projects": {"team-a": {"defaultUser": "alice",   // optional
//                            "serviceAccounts": {"trainer@team-a.iam.gserviceaccount.com":
//                            "alice"}}}}
//
// Rules:
// - A job naming a serviceAccount runs as the user the table maps it to in the job's project; a
//   serviceAccount the table does not map is refused at create (INVALID_ARGUMENT naming
//   jobSpec.serviceAccount). Without a table every serviceAccount runs as the default user
//   below, so a Vertex job script that names one works unchanged.
// - A job without one runs as the project's defaultUser, else the table's defaultUser, else
//   `nobody` when the server runs as root (the server's own user otherwise).
// - Replicas run as uid 0 only with `allow_root` (--allow-root-replicas); the default user is then
//   root itself unless the table names one. A table entry naming a uid-0 user without it, a user
//   that does not exist, or (for a server not running as root) a user other than the server's
//   fails Load, so a bad table stops the server at start-up instead of failing jobs later.
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"

namespace trainyard::controller {

// Looks a user up by name (getpwnam_r + getgrouplist on the real host): NOT_FOUND if unknown.
using UserLookup = std::function<StatusOr<executor::RunAs>(const std::string& user)>;
UserLookup SystemUserLookup();

struct ReplicaUsersOptions {
  std::filesystem::path table_file;  // empty: no table
  bool allow_root = false;           // --allow-root-replicas
  uid_t server_uid = 0;              // the server's effective uid (geteuid())
  std::string server_user;           // its name, for messages
  UserLookup lookup;                 // nullptr: SystemUserLookup()
  // A group every replica user gets as a supplementary group: the bucket root's (the server's
  // --bucket-group), so replicas may write into buckets as Vertex's service accounts may.
  std::optional<uint32_t> shared_group;
};

class ReplicaUsers {
 public:
  // Reads and checks the table (rules above). INVALID_ARGUMENT naming the file and the entry
  // (e.g. "projects.team-a.serviceAccounts[\"x\"]: no Unix user 'bob' on this host").
  static StatusOr<ReplicaUsers> Load(ReplicaUsersOptions options);

  // The identity replicas of a job in `project` naming `service_account` ("" = none) run as;
  // nullopt when that is the server's own user (nothing to switch). INVALID_ARGUMENT naming
  // jobSpec.serviceAccount and the fix when the job must be refused.
  StatusOr<std::optional<executor::RunAs>> Resolve(const std::string& project,
                                                   const std::string& service_account) const;

  // Every identity a replica may get that is not the server's own (to check, at start-up, that
  // they can reach the jobs dir and the bucket root: executor::CheckCanReach).
  std::vector<executor::RunAs> OtherIdentities() const;

  // One line for the server's start-up log, e.g. "replicas run as 'nobody' unless ...".
  std::string Describe() const;

 private:
  struct Project {
    std::string default_user;                             // "" = the table's
    std::map<std::string, std::string> service_accounts;  // account -> user
  };
  ReplicaUsers() = default;
  Status CheckUser(const std::string& user, const std::string& where);
  StatusOr<std::optional<executor::RunAs>> IdentityOf(const std::string& user) const;

  ReplicaUsersOptions options_;
  bool has_table_ = false;
  std::string default_user_;  // the table's defaultUser, or the built-in default
  std::map<std::string, Project> projects_;
  std::map<std::string, executor::RunAs> users_;  // every user named, looked up at Load
};

}  // namespace trainyard::controller
