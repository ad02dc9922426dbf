// Which users replicas run as, and what they may reach, settled before anything is served
// (docs/security.md): the --service-accounts table is loaded and checked, a root server shares
// the bucket root with the bucket group, and each replica user must be able to reach the jobs dir
// and the bucket root, else every job would fail later.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "common/status.h"
#include "controller/replica_users.h"
#include "server/data_dir.h"

namespace trainyard::server {

struct ReplicaAccessOptions {
  std::string service_accounts;             // the serviceAccount -> Unix user table; "" = none
  std::optional<std::string> bucket_group;  // unset = "trainyard" if that group exists; "" = none
  bool allow_root_replicas = false;         // replicas may run as uid 0
  bool runs_replicas = true;                // false (--executor fake): skip the reach checks
};

// Loads the replica users (controller::ReplicaUsers::Load) for this server's effective uid.
// A root server gives the bucket root to the bucket group (setgid, 02755: not group-writable, so
// no replica makes a bucket; umask 002), so replicas of several users can write into the same
// buckets; a missing default group only gets a note on
// `log`. When replicas run as other users, the data dir lets them pass through (0711).
// INVALID_ARGUMENT for a --bucket-group that does not exist or a bad table; FAILED_PRECONDITION,
// naming the user, the dir and the fixes, when a replica user cannot reach the jobs dir or the
// bucket root.
StatusOr<controller::ReplicaUsers> LoadReplicaUsers(const ReplicaAccessOptions& options,
                                                    const DataDir& data_dir, std::ostream& log);

}  // namespace trainyard::server
