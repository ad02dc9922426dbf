// Small file-system helpers shared by every subsystem.
//
// Durable writes go through WriteFileAtomic: a reader sees the old file or the new one, never a
// torn one, and after it returns OK the content survives a crash (STYLE.md §7).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard {

// Reads the whole file. NOT_FOUND if it does not exist, UNAVAILABLE (I/O) on read errors.
StatusOr<std::string> ReadFile(const std::filesystem::path& path);

// Writes `content` to `path` atomically: writes "<path>.tmp.<pid>.<n>", fsyncs it, renames it over
// `path` and fsyncs the directory. Creates missing parent directories. On failure the temp file is
// removed and `path` is untouched. An existing special file (/dev/null, a FIFO, a device) is
// written to in place, never replaced; a directory at `path` is FAILED_PRECONDITION.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view content);

// Like WriteFileAtomic but without any fsync: readers still never see a torn file and the new
// content survives a crash of this process, but not necessarily a power loss. For state that is
// rewritten often and only matters while processes run (an fsync costs ~10 ms).
Status ReplaceFile(const std::filesystem::path& path, std::string_view content);

// Writes all of `data` to `fd` (retrying short writes and EINTR); IO error naming `path`.
Status WriteAll(int fd, std::string_view data, const std::filesystem::path& path);

// fsyncs a file or directory (used after renames so the new name is durable).
Status FsyncPath(const std::filesystem::path& path);

// Creates the directory and its parents; OK if it already exists.
Status MakeDirs(const std::filesystem::path& path);

// Returns a fresh, empty directory next to `final_dir` ("<final_dir>.tmp.<pid>.<n>") to build
// content in before committing it with CommitDirectory.
StatusOr<std::filesystem::path> MakeStagingDir(const std::filesystem::path& final_dir);

// Atomically replaces `final_dir` with `staging_dir` (fsyncs files inside first). If `final_dir`
// exists it is moved aside and removed after the rename.
Status CommitDirectory(const std::filesystem::path& staging_dir,
                       const std::filesystem::path& final_dir);

}  // namespace trainyard
