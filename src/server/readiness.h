// What GET /readyz answers: whether this server can accept work and queue it durably. /healthz
// says only that it serves; a load balancer or monitor sends creates only where /readyz is 200.
//
// Ready means the data dir (jobs.db, the job dirs) takes a write that reaches the disk (a file
// made, written, fsync'ed and removed) and has at least `min_free_bytes` free for the server's
// user. An unreachable Slurm controller or a busy host does not make it unready: creates are then
// queued, as they are meant to be.
#pragma once

#include <cstdint>
#include <filesystem>

#include "common/status.h"

namespace trainyard::server {

// OK, or UNAVAILABLE naming the data dir, what failed and the fix.
Status CheckReadiness(const std::filesystem::path& data_dir, uint64_t min_free_bytes);

}  // namespace trainyard::server
