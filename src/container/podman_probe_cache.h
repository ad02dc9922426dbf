// DetectPodmanRuntime's result kept on this host across server starts, so a server's first
// container job does not wait for the probe (`podman info` and a probe container: ~300 ms), which
// otherwise sits on that job's start.
//
// The result belongs to the host, not to a data dir: it depends on the podman and OCI runtime
// binaries, the kernel and this process's hard limits and user, which the key records (each
// binary by path, size and modification time); not on where podman keeps images (--root). A
// different key, or an unreadable or malformed file, is a miss: the server probes and writes the
// file again (temp-then-rename). Only a probe that succeeded is kept. The file: root's in
// /var/cache/trainyard/, others' in $XDG_CACHE_HOME/trainyard/ (else ~/.cache/trainyard/);
// $TRAINYARD_PODMAN_PROBE_CACHE names another, "" turns it off.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "container/podman_runtime.h"

namespace trainyard::container {

// The cache file (empty: none).
std::filesystem::path PodmanProbeCacheFile();

// What the probe's result depends on, for `options` and `limits`.
std::string PodmanProbeKey(const PodmanOptions& options, const HostLimits& limits);

// The runtime the file holds under `key`; nullopt on any miss.
std::optional<PodmanRuntime> LoadPodmanProbe(const std::filesystem::path& file,
                                             const std::string& key);
// Keeps `runtime` under `key` (best effort: a write error only costs the next server a probe).
void SavePodmanProbe(const std::filesystem::path& file, const std::string& key,
                     const PodmanRuntime& runtime);

}  // namespace trainyard::container
