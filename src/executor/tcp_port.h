// Picking a TCP port for a replica (its CLUSTER_SPEC address, MASTER_PORT): shared by the local
// executor and the Slurm task launcher, which picks one on its node.
#pragma once

#include <string>

#include "common/status.h"

namespace trainyard::executor {

// A TCP port that is free on `host` right now (bind to port 0; any address when `host` is not an
// IPv4 literal). Another process may take it before the replica binds it; on one host that race
// is rare and the replica then fails and is restarted. UNAVAILABLE if none.
StatusOr<int> PickFreeTcpPort(const std::string& host);

}  // namespace trainyard::executor
