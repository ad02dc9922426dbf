// Writes the file system refuses because it is full (bytes or inodes) or read-only: how they are
// recognised and the one wording users see (issue #47).
//
// Such a write fails with RESOURCE_EXHAUSTED (gRPC's code for out-of-space; HTTP 429) whose message
// names the place as users know it — "the server's data directory", a gs:// URI — and its free
// space. The absolute path and the OS's (or SQLite's) words go to the server's log only
// (SetDiskFaultReporter): API callers never see server paths. Nothing is acknowledged that was not
// written: every caller returns the error instead of the result.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard {

enum class DiskFault { kNone, kFull, kNoInodes, kReadOnly };

// How users know the data dir: the place every DiskFaultError about jobs.db, auth.db and the job
// dirs names.
inline constexpr char kDataDirPlace[] = "the server's data directory";

// ENOSPC/EDQUOT: kNoInodes when the file system of `path` (or of its nearest existing ancestor)
// has no free inode left, else kFull; EROFS: kReadOnly; any other errno: kNone.
DiskFault ClassifyWriteError(int err, const std::filesystem::path& path);

// "disk full", "no free inodes", "read-only file system" (kNone: ""): the short reason, e.g. in
// the job log's "[trainyard] 3 log lines were lost: disk full".
std::string_view DiskFaultReason(DiskFault fault);

// RESOURCE_EXHAUSTED for `fault` (not kNone), naming `where` and the free space of `path`'s file
// system, one of
//   - the server's data directory is full (0.3 MiB free); nothing was stored: free space there
//     and retry
//   - the server's data directory has no free inodes (0 of 2000 left; 11.2 MiB free); nothing
//     was stored: remove files there and retry
//   - the server's data directory is read-only; nothing was stored: remount it read-write and
//     retry
//   - the server's data directory is read-only (its file system turned read-only after an
//     error); nothing was stored: stop the server, check the file system (fsck), mount it again
//     and start the server
// The last when `path`'s file system is mounted read-write yet refuses writes: the kernel stopped
// them after an error (ext4 errors=remount-ro), and only a check and a new mount lift that.
// `path` (the file that could not be written) and `detail` (the OS's or SQLite's words) are
// reported to the server log, never put in the message.
Status DiskFaultError(DiskFault fault, std::string_view where, const std::filesystem::path& path,
                      std::string_view detail);

// "<where> is full (0.3 MiB free)", "<where> has no free inodes (0 of 2000 left; ...)",
// "<where> is read-only" (or "... read-only (its file system turned read-only after an error)"):
// the condition alone, for work that was kept and waits for room.
std::string DiskFaultCondition(DiskFault fault, std::string_view where,
                               const std::filesystem::path& path);

// 0 if the file system of directory `dir` takes a new file now, else the errno of the attempt
// (EROFS, ENOSPC, ...). The file is never linked (O_TMPFILE): nothing is left behind. For errors
// whose errno says nothing of the cause (SQLite's "disk I/O error" after ext4 stopped writes).
int WriteProbeErrno(const std::filesystem::path& dir);

// Which fault an error about a file under `root` reports, from the OS's words for ENOSPC,
// EDQUOT or EROFS in its message (file_util's errors carry them); kNone for other errors.
DiskFault DiskFaultOf(const Status& status, const std::filesystem::path& root);

// `status` in DiskFaultError's words naming `where` when DiskFaultOf finds a fault in it, else
// `status` as it is. For errors that reach users from layers whose messages name paths.
Status AsDiskFault(const Status& status, std::string_view where, const std::filesystem::path& root);

// Whether `status` says a write was refused for lack of room or a read-only file system
// (RESOURCE_EXHAUSTED: DiskFaultError, and file_util's errors of the same cause).
bool IsDiskFault(const Status& status);

// Where DiskFaultError reports paths: the server sets a writer into its log; the default writes
// to stderr. The same line again within 10 s is dropped, since controllers retry failed writes
// every second. Thread-safe.
void SetDiskFaultReporter(std::function<void(const std::string& line)> reporter);

}  // namespace trainyard
