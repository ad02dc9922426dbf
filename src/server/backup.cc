// BackupDataDir and KnownSchemaVersions (backup.h); restore is restore.cc.
#include "server/backup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "auth/auth_db_schema.h"
#include "common/file_util.h"
#include "server/backup_manifest.h"
#include "sqlite/backup.h"
#include "store/jobs_db_schema.h"

namespace trainyard::server {
namespace {

namespace fs = std::filesystem;

Status CheckDestination(const fs::path& data_dir, const fs::path& dest) {
  const std::string jobs = (data_dir / "jobs").string() + "/";
  if ((dest.string() + "/").starts_with(jobs)) {
    return FailedPreconditionError("the backup dir " + dest.string() + " is inside " + jobs +
                                   ", which it copies; choose a dir outside it");
  }
  std::error_code ec;
  if (!fs::exists(dest, ec)) return Status::Ok();
  if (!fs::is_directory(dest, ec) || !fs::is_empty(dest, ec)) {
    return FailedPreconditionError("the backup dir " + dest.string() +
                                   " exists and is not an empty dir; name a new dir");
  }
  return Status::Ok();
}

// The database files of the data dir, sorted: "auth.db", "jobs.db", ...
std::vector<fs::path> DatabaseFiles(const fs::path& data_dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data_dir, ec)) {
    if (e.path().extension() == ".db" && e.is_regular_file(ec) && !e.is_symlink(ec)) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Copies one top-level entry of the data dir (not a database) into `staging`.
Status CopyEntry(const fs::path& from, const fs::path& staging, TreeCopyStats* stats) {
  const std::string name = from.filename().string();
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(from, ec);
  if (fs::is_directory(st)) return CopyTree(from, staging / name, stats);
  if (fs::is_regular_file(st)) {
    int64_t bytes = 0;
    TY_RETURN_IF_ERROR(CopyRegularFile(from, staging / name, &bytes));
    if (bytes >= 0) {
      ++stats->files;
      stats->bytes += bytes;
    }
    return Status::Ok();
  }
  if (fs::exists(st)) {
    stats->skipped.push_back({name, fs::is_symlink(st) ? "symlink" : "special file",
                              fs::is_symlink(st) ? fs::read_symlink(from, ec).string() : ""});
  }
  return Status::Ok();
}

Status FillBackup(const fs::path& data_dir, const fs::path& staging, BackupManifest* m) {
  // Databases first: their rows are what a restored server trusts; the job files after them can
  // only be newer (backup.h).
  for (const fs::path& db : DatabaseFiles(data_dir)) {
    const fs::path copy = staging / db.filename();
    TY_RETURN_IF_ERROR(sqlite::CopyDatabaseFile(db, copy));
    TY_ASSIGN_OR_RETURN(BackupDatabase facts, ReadDatabaseFacts(copy));
    m->databases.push_back(std::move(facts));
  }
  std::vector<fs::path> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data_dir, ec)) {
    if (IsBackedUpFile(e.path().filename().string())) entries.push_back(e.path());
  }
  if (ec) return UnavailableError("cannot list " + data_dir.string() + ": " + ec.message());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& e : entries) TY_RETURN_IF_ERROR(CopyEntry(e, staging, &m->files));
  return WriteFileAtomic(staging / kManifestFile, EncodeManifest(*m));
}

// `dest` is absent or an empty dir (CheckDestination); rmdir fails if something appeared since.
Status Commit(const fs::path& staging, const fs::path& dest) {
  if (::rmdir(dest.c_str()) != 0 && errno != ENOENT) {
    return FailedPreconditionError("cannot replace the empty dir " + dest.string() + ": " +
                                   std::strerror(errno));
  }
  if (::rename(staging.c_str(), dest.c_str()) != 0) {
    return UnavailableError("cannot rename " + staging.string() + " to " + dest.string() + ": " +
                            std::strerror(errno));
  }
  return FsyncPath(dest.parent_path());
}

}  // namespace

bool IsBackedUpFile(const std::string& name) {
  for (const char* suffix : {".db", ".db-wal", ".db-shm", ".db-journal", ".bak"}) {
    if (name.ends_with(suffix)) return false;
  }
  return name != "server.lock" && name != "pip-cache" && name != kManifestFile &&
         !name.starts_with(".") && name.find(".tmp.") == std::string::npos;
}

std::map<std::string, int> KnownSchemaVersions() {
  return {{"jobs.db", store::JobsDbSchema().back().version},
          {"auth.db", auth::AuthDbSchema().back().version}};
}

StatusOr<BackupManifest> BackupDataDir(const fs::path& data_dir_in, const fs::path& dest_in,
                                       const BackupOptions& options) {
  const fs::path data_dir = fs::absolute(data_dir_in).lexically_normal();
  const fs::path dest = fs::absolute(dest_in).lexically_normal();
  std::error_code ec;
  if (!fs::is_regular_file(data_dir / "jobs.db", ec)) {
    return FailedPreconditionError(data_dir.string() +
                                   " has no jobs.db: is it a trainyard server's --data-dir?");
  }
  TY_RETURN_IF_ERROR(CheckDestination(data_dir, dest));
  TY_ASSIGN_OR_RETURN(fs::path staging, MakeStagingDir(dest));
  ::chmod(staging.c_str(), 0700);  // it holds token hashes and every job's files
  BackupManifest m;
  m.trainyard_version = options.trainyard_version;
  m.create_time = FormatTimestamp(options.now);
  m.data_dir = data_dir.string();
  Status s = FillBackup(data_dir, staging, &m);
  if (s.ok()) s = Commit(staging, dest);
  if (!s.ok()) {
    fs::remove_all(staging, ec);
    return s;
  }
  return m;
}

}  // namespace trainyard::server
