// Copies a directory tree for `trainyard admin backup` and `restore` (backup.h): regular files
// and directories with their mode, owner and times; symbolic links, FIFOs, sockets and devices
// are not copied but listed, so a link a job left in its dir is never followed (in or out of the
// data dir). Every copied file and directory is fsynced before the call returns.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::server {

// What CopyTree did not copy: "jobs/12/out" (relative to the tree's parent), "symlink" (or
// "fifo", "socket", "device"), and a link's target as it reads ("" for the others).
struct SkippedEntry {
  std::string path;
  std::string kind;
  std::string target;
};

struct TreeCopyStats {
  int64_t files = 0;  // regular files copied
  int64_t bytes = 0;  // their bytes, as copied
  std::vector<SkippedEntry> skipped;
};

// Copies the directory `from` to `to` (which must not exist), adding to *stats. A file or
// directory that vanishes while it is copied (a job's temp file) is left out silently; a file
// that grows while it is copied is copied up to where it was read. Ownership is kept where this
// process may set it (root), else the files belong to the caller. UNAVAILABLE naming the path on
// any other error (a full disk: with the free space).
Status CopyTree(const std::filesystem::path& from, const std::filesystem::path& to,
                TreeCopyStats* stats);

// Copies one regular file as CopyTree does (mode, owner, times, fsynced); *bytes gets its size.
Status CopyRegularFile(const std::filesystem::path& from, const std::filesystem::path& to,
                       int64_t* bytes);

// The regular files under `dir` and their bytes (links and special files not counted): what
// CopyTree copied, to compare a backup with its manifest.
StatusOr<TreeCopyStats> CountTree(const std::filesystem::path& dir);

}  // namespace trainyard::server
