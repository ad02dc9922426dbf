// Consistent copies of a SQLite database with SQLite's online backup API
// (sqlite3_backup_init/step/finish): the copy is one snapshot of the source even while other
// connections or processes write it (WAL readers never block writers). Used before every schema
// upgrade (schema.h) and by `trainyard admin backup` (server/backup.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/status.h"

namespace trainyard::sqlite {

// Copies the "main" database of `from` to the file `to`: written to "<to>.tmp.<pid>", fsynced,
// renamed over `to` (the directory fsynced), in rollback-journal mode (one self-contained file;
// whoever opens it may set WAL again), mode 0600 (databases hold token hashes and jobs'
// specs). Whoever reads `to` sees a whole copy or nothing. On failure the temp file is removed,
// `to` is untouched and the error is UNAVAILABLE naming `to` and the free space where it goes
// (a full disk is the usual cause). `from` must not be inside a transaction this call would see
// half of (it reads in its own read transaction). Not thread-safe on `from`'s connection.
Status CopyDatabase(sqlite3* from, const std::filesystem::path& to);

// Opens the database file `path` read-only and copies it with CopyDatabase. NOT_FOUND when
// `path` does not exist; UNAVAILABLE as CopyDatabase, or when `path` cannot be opened.
Status CopyDatabaseFile(const std::filesystem::path& path, const std::filesystem::path& to);

// Bytes an unprivileged user may still write on the filesystem of `dir` (statvfs f_bavail);
// -1 when it cannot be read.
int64_t FreeBytes(const std::filesystem::path& dir);

// "12.5 MiB free in DIR" (or "free space in DIR unknown"), for errors that may be a full disk.
std::string FreeSpaceText(const std::filesystem::path& dir);

}  // namespace trainyard::sqlite
