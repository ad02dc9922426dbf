// `trainyard admin backup` and `restore` as a library: a data dir (data_dir.h) copied whole into
// a backup dir, and a backup dir put back as a data dir.
//
// A backup dir holds:
//   MANIFEST.json   what was copied: {"format": "trainyard-backup", "formatVersion": 1,
//                   "trainyardVersion", "createTime", "dataDir", "databases": [{"file",
//                   "schemaVersion", "bytes", "rows": {table: count}}], "files": {"count",
//                   "bytes"}, "skipped": [{"path", "kind", "target"}]}
//   *.db            every database of the data dir (jobs.db, auth.db, ...), each one consistent
//                   snapshot taken with SQLite's online backup API (sqlite/backup.h)
//   everything else of the data dir (IsBackedUpFile): jobs/ (each job's logs, replica work
//                   dirs, executor state), the executors' job-dir registries (executor/, slurm/),
//                   images.yaml, ... with their modes, owners and times; symbolic links and special
//                   files are listed in "skipped", never followed
// Not copied: server.lock, the databases' -wal/-shm/-journal files (the copies hold their
// content), the pre-upgrade copies (*.bak), pip-cache/ (a cache), dot files and temp files.
//
// A backup may be taken while a server serves the data dir (it takes no lock). Each database is
// consistent on its own, but the job files are copied after the databases: a job that runs during
// the backup may have newer files (more log lines, a later checkpoint) than its row says. Take it
// with the server stopped for an exact picture.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "server/tree_copy.h"

namespace trainyard::server {

inline constexpr char kManifestFile[] = "MANIFEST.json";

struct BackupDatabase {
  std::string file;  // "jobs.db"
  int schema_version = 0;
  int64_t bytes = 0;
  std::map<std::string, int64_t> rows;  // every table's row count
};

// What a backup holds (its MANIFEST.json).
struct BackupManifest {
  std::string trainyard_version;
  std::string create_time;  // RFC 3339
  std::string data_dir;     // where it was taken from
  std::vector<BackupDatabase> databases;
  TreeCopyStats files;  // everything but the databases and the manifest
};

struct BackupOptions {
  std::string trainyard_version;  // for the manifest
  TimePoint now;                  // the manifest's createTime
};

// Copies the data dir `data_dir` into `dest`, which must not exist or be an empty dir: built in
// "<dest>.tmp.<pid>.<n>" next to it, fsynced and renamed, so a `dest` that exists is a whole
// backup (an interrupted one leaves only the .tmp dir). Returns the manifest written.
// FAILED_PRECONDITION when `data_dir` has no jobs.db or `dest` is not empty; UNAVAILABLE naming
// the path (and free space) when a copy fails, the .tmp dir then removed.
StatusOr<BackupManifest> BackupDataDir(const std::filesystem::path& data_dir,
                                       const std::filesystem::path& dest,
                                       const BackupOptions& options);

// Whether a top-level entry of the data dir named `name` is copied by BackupDataDir besides the
// databases (*.db, copied with the online backup API).
bool IsBackedUpFile(const std::string& name);

// The newest schema this binary reads, per database file: {"auth.db": 2, "jobs.db": 4} today. A
// database not named is not checked here (the server's own open still refuses one from a newer
// Trainyard).
std::map<std::string, int> KnownSchemaVersions();

// Checks the backup dir `backup` without changing anything: MANIFEST.json reads; every database
// it lists is there, passes PRAGMA integrity_check and is at the manifest's schema version, which
// `latest` does not exceed; the other files add up to the manifest's count and bytes. Returns the
// manifest. FAILED_PRECONDITION naming the file and what is wrong otherwise.
StatusOr<BackupManifest> VerifyBackup(const std::filesystem::path& backup,
                                      const std::map<std::string, int>& latest);

struct RestoreOptions {
  bool force = false;  // move a non-empty data dir's content aside first
  std::map<std::string, int> latest = KnownSchemaVersions();
  TimePoint now;  // names the dir content is moved aside to
};

struct RestoreResult {
  BackupManifest manifest;
  std::filesystem::path moved_aside;  // "" when the data dir was empty
};

// Puts the backup `backup` in place as the data dir `data_dir` (empty = DefaultServerDataDir()):
// VerifyBackup first; then takes the data dir's lock (DataDir::Lock: FAILED_PRECONDITION while a
// server uses it); the data dir must be empty (server.lock and an empty jobs/ aside) unless
// `force`, which moves its content (never deletes it) into "<data_dir>.before-restore-<time>".
// The copy is built inside the data dir and renamed into place; databases end 0600. When the
// backup was taken from another path, the executors' job-dir registries (gang_record.h) are
// pointed at the restored job dirs. Errors name the path and the fix.
StatusOr<RestoreResult> RestoreDataDir(const std::filesystem::path& backup,
                                       const std::filesystem::path& data_dir,
                                       const RestoreOptions& options);

}  // namespace trainyard::server
