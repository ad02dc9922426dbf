// How a replica reaches the Python package index the host's own pip is configured with, and the
// pip cache its project's jobs share on this host (the pip launcher in
// spec/python_package_launcher.h does the install).
//
// A host replica inherits the server's environment and reads the host's pip files itself. A
// container sees neither, so the executor hands it what pip needs to behave as on the host:
//   - the variables pip and its HTTP stack read: PIP_* (but PIP_CACHE_DIR, set below, and
//     PIP_CONSTRAINT, PIP_TARGET, PIP_PREFIX, PIP_USER, PIP_SRC, which name host paths or change
//     where pip installs), the proxies (http_proxy, https_proxy, no_proxy, all_proxy, either
//     case), REQUESTS_CA_BUNDLE, SSL_CERT_FILE and SSL_CERT_DIR;
//   - read-only, at their own path: pip's global configuration files (/etc/xdg/pip/pip.conf,
//     /etc/pip.conf), the server user's own (~/.config/pip/pip.conf, ~/.pip/pip.conf) or
//     $PIP_CONFIG_FILE (handed over as PIP_CONFIG_FILE, since the container's HOME differs), the
//     certificate files and directories they or the variables name (cert, client-cert), and local
//     wheelhouses (find-links paths and file: URLs).
// Offline hosts give pip a wheelhouse the same way: `find-links = /srv/wheels` and
// `no-index = true` in /etc/pip.conf (docs/containers.md).
//
// The cache: <root>/<project>, made for the replica's user (0700), named by PIP_CACHE_DIR and,
// for a container, mounted read-write at its own path. One per project, not one per host: a
// replica can write the cache, and another project's jobs must not install what it wrote.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"
#include "executor/replica_env.h"

namespace trainyard::executor {

struct PackageIndexAccess {
  EnvMap env;                                    // to add to a container's environment
  std::vector<std::filesystem::path> read_only;  // to mount read-only at the same path
};

// What a container needs, read from `server_env` (the server's environment, for PIP_*, HOME and
// XDG_CONFIG_HOME) and the files above, under `root` ("/" but in tests). Missing files are left
// out; unreadable ones too (pip in the container would not read them either).
PackageIndexAccess HostPackageIndexAccess(const EnvMap& server_env,
                                          const std::filesystem::path& root = "/");

// <cache_root>/<project of job_name> ("projects/P/..." -> P; anything else -> "default"), made
// with MakeReplicaDir for `run_as`. Errors name the directory.
StatusOr<std::filesystem::path> ProjectPipCache(const std::filesystem::path& cache_root,
                                                const std::string& job_name,
                                                const std::optional<RunAs>& run_as);

}  // namespace trainyard::executor
