// VerifyBackup and RestoreDataDir (backup.h).
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/file_util.h"
#include "executor/gang_record.h"
#include "server/backup.h"
#include "server/backup_manifest.h"
#include "server/built_in_executors.h"
#include "server/data_dir.h"
#include "sqlite/backup.h"
#include "sqlite/sqlite.h"

namespace trainyard::server {
namespace {

namespace fs = std::filesystem;

Status CheckIntegrity(const fs::path& path) {
  sqlite3* db = nullptr;
  std::string result = "cannot open";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite::Stmt check(db, "PRAGMA integrity_check");
    result = check.Step() == SQLITE_ROW ? check.Text(0) : sqlite3_errmsg(db);
  }
  sqlite3_close(db);
  if (result == "ok") return Status::Ok();
  return FailedPreconditionError(path.string() + " fails PRAGMA integrity_check (" + result +
                                 "): the backup is damaged; restore another one");
}

Status CheckDatabase(const fs::path& backup, const BackupDatabase& db, const BackupManifest& m,
                     const std::map<std::string, int>& latest) {
  const fs::path path = backup / db.file;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return FailedPreconditionError(path.string() + " is missing but " + kManifestFile +
                                   " lists it: the backup is incomplete; restore another one");
  }
  TY_RETURN_IF_ERROR(CheckIntegrity(path));
  TY_ASSIGN_OR_RETURN(BackupDatabase facts, ReadDatabaseFacts(path));
  if (facts.schema_version != db.schema_version) {
    return FailedPreconditionError(path.string() + " is at schema " +
                                   std::to_string(facts.schema_version) + " but " + kManifestFile +
                                   " says " + std::to_string(db.schema_version) +
                                   ": the backup was changed after it was written");
  }
  if (auto known = latest.find(db.file);
      known != latest.end() && db.schema_version > known->second) {
    return FailedPreconditionError(
        path.string() + " is at schema " + std::to_string(db.schema_version) +
        ", newer than this trainyard reads (" + std::to_string(known->second) +
        "): the backup was written by trainyard " + m.trainyard_version +
        "; restore it with that version or a newer one");
  }
  return Status::Ok();
}

// The backup's entries other than the manifest and the databases it lists: what BackupDataDir
// copied with CopyTree / CopyRegularFile.
std::vector<fs::path> FileEntries(const fs::path& backup, const BackupManifest& m) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(backup, ec)) {
    const std::string name = e.path().filename().string();
    bool listed = name == kManifestFile;
    for (const BackupDatabase& db : m.databases) listed = listed || db.file == name;
    if (!listed && IsBackedUpFile(name)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status CheckFiles(const fs::path& backup, const BackupManifest& m) {
  TreeCopyStats found;
  std::error_code ec;
  for (const fs::path& e : FileEntries(backup, m)) {
    if (fs::is_directory(fs::symlink_status(e, ec))) {
      TY_ASSIGN_OR_RETURN(TreeCopyStats tree, CountTree(e));
      found.files += tree.files;
      found.bytes += tree.bytes;
    } else if (fs::is_regular_file(fs::symlink_status(e, ec))) {
      ++found.files;
      found.bytes += static_cast<int64_t>(fs::file_size(e, ec));
    }
  }
  if (found.files != m.files.files || found.bytes != m.files.bytes) {
    return FailedPreconditionError(
        backup.string() + " holds " + std::to_string(found.files) + " files (" +
        std::to_string(found.bytes) + " bytes) besides its databases but " + kManifestFile +
        " says " + std::to_string(m.files.files) + " (" + std::to_string(m.files.bytes) +
        " bytes): the backup is incomplete or was changed; restore another one");
  }
  return Status::Ok();
}

// What the data dir holds besides its lock and the empty jobs/ DataDir::Lock makes.
std::vector<fs::path> Content(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "server.lock") continue;
    if (name == "jobs" && e.is_directory(ec) && fs::is_empty(e.path(), ec)) continue;
    out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The backup's databases and files copied into `staging`.
Status CopyBackup(const fs::path& backup, const BackupManifest& m, const fs::path& staging) {
  for (const BackupDatabase& db : m.databases) {
    TY_RETURN_IF_ERROR(sqlite::CopyDatabaseFile(backup / db.file, staging / db.file));
  }
  TreeCopyStats stats;
  std::error_code ec;
  for (const fs::path& e : FileEntries(backup, m)) {
    const fs::path to = staging / e.filename();
    if (fs::is_directory(fs::symlink_status(e, ec))) {
      TY_RETURN_IF_ERROR(CopyTree(e, to, &stats));
    } else if (fs::is_regular_file(fs::symlink_status(e, ec))) {
      int64_t bytes = 0;
      TY_RETURN_IF_ERROR(CopyRegularFile(e, to, &bytes));
    }
  }
  return Status::Ok();
}

// The executors remember each job's dir by its absolute path (gang_record.h), so that logs of
// ended jobs read after a restart; a backup taken from another data dir names dirs there.
Status RelocateJobDirs(const fs::path& old_dir, const fs::path& new_dir) {
  if (old_dir.empty() || old_dir == new_dir) return Status::Ok();
  const std::string old_prefix = old_dir.string() + "/";
  std::error_code ec;
  for (const std::string& registry : BuiltInJobDirRegistries()) {
    for (const auto& e : fs::directory_iterator(new_dir / registry / "jobs", ec)) {
      const std::string job_id = e.path().filename().string();
      auto job_dir = executor::LookupJobDir(new_dir, registry, job_id);
      if (!job_dir.ok() || !job_dir->string().starts_with(old_prefix)) continue;
      TY_RETURN_IF_ERROR(executor::RegisterJobDir(
          new_dir, registry, job_id, new_dir / job_dir->string().substr(old_prefix.size())));
    }
  }
  return Status::Ok();
}

// "<dir>.before-restore-20261122T024152Z" (with -2, -3, ... if taken); made empty, 0700.
StatusOr<fs::path> MakeAsideDir(const fs::path& dir, TimePoint now) {
  std::string stamp = FormatTimestamp(now).substr(0, 19) + "Z";
  stamp.erase(
      std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }),
      stamp.end());
  for (int n = 1; n < 100; ++n) {
    fs::path aside =
        dir.string() + ".before-restore-" + stamp + (n > 1 ? "-" + std::to_string(n) : "");
    if (::mkdir(aside.c_str(), 0700) == 0) return aside;
    if (errno != EEXIST) {
      return UnavailableError("cannot create " + aside.string() + ": " + std::strerror(errno) +
                              "; move the content of " + dir.string() +
                              " away yourself and restore without --force");
    }
  }
  return UnavailableError("too many " + dir.string() + ".before-restore-* dirs; clean them up");
}

Status MoveInto(const std::vector<fs::path>& entries, const fs::path& to_dir) {
  for (const fs::path& e : entries) {
    const fs::path to = to_dir / e.filename();
    if (::rename(e.c_str(), to.c_str()) != 0) {
      return UnavailableError("cannot move " + e.string() + " to " + to.string() + ": " +
                              std::strerror(errno));
    }
  }
  return FsyncPath(to_dir);
}

// Moves the old content aside (or drops the empty jobs/ Lock made), then the staged copy in.
Status PutInPlace(const DataDir& dir, const fs::path& staging, const std::vector<fs::path>& old,
                  const fs::path& aside) {
  if (!aside.empty()) {
    TY_RETURN_IF_ERROR(MoveInto(old, aside));
    TY_RETURN_IF_ERROR(FsyncPath(aside.parent_path()));
  }
  std::error_code ec;
  fs::remove(dir.jobs_dir(), ec);  // the empty one DataDir::Lock made (if still there)
  std::vector<fs::path> staged;
  for (const auto& e : fs::directory_iterator(staging, ec)) staged.push_back(e.path());
  TY_RETURN_IF_ERROR(MoveInto(staged, dir.path()));
  fs::remove(staging, ec);
  TY_RETURN_IF_ERROR(MakeDirs(dir.jobs_dir()));
  TY_RETURN_IF_ERROR(FsyncPath(dir.path()));
  return dir.MakeDatabasesPrivate();
}

}  // namespace

StatusOr<BackupManifest> VerifyBackup(const fs::path& backup,
                                      const std::map<std::string, int>& latest) {
  const fs::path manifest_path = backup / kManifestFile;
  auto text = ReadFile(manifest_path);
  if (!text.ok()) {
    return FailedPreconditionError(
        backup.string() + " has no readable " + kManifestFile + " (" + text.status().message() +
        "): it is not a whole trainyard backup (an interrupted one is a .tmp.* dir); name the dir "
        "`trainyard admin backup` wrote");
  }
  TY_ASSIGN_OR_RETURN(BackupManifest m, DecodeManifest(*text, manifest_path.string()));
  bool has_jobs_db = false;
  for (const BackupDatabase& db : m.databases) {
    TY_RETURN_IF_ERROR(CheckDatabase(backup, db, m, latest));
    has_jobs_db = has_jobs_db || db.file == "jobs.db";
  }
  if (!has_jobs_db) {
    return FailedPreconditionError(manifest_path.string() +
                                   " lists no jobs.db: it is not a backup of a server's data dir");
  }
  TY_RETURN_IF_ERROR(CheckFiles(backup, m));
  return m;
}

StatusOr<RestoreResult> RestoreDataDir(const fs::path& backup, const fs::path& data_dir,
                                       const RestoreOptions& options) {
  RestoreResult result;
  TY_ASSIGN_OR_RETURN(result.manifest, VerifyBackup(backup, options.latest));
  auto locked = DataDir::Lock(data_dir);
  if (!locked.ok()) {
    return Status(locked.status().code(), "cannot restore: " + locked.status().message());
  }
  const DataDir& dir = *locked;
  const std::vector<fs::path> old = Content(dir.path());
  if (!old.empty() && !options.force) {
    std::string names;
    for (size_t i = 0; i < old.size() && i < 4; ++i) {
      names += (i ? ", " : "") + old[i].filename().string();
    }
    return FailedPreconditionError(
        "--data-dir " + dir.path().string() + " is not empty (" + names +
        (old.size() > 4 ? ", ..." : "") +
        "); restore into a new dir, or pass --force to move its content aside to " +
        dir.path().string() + ".before-restore-<time>");
  }
  const fs::path staging = dir.path() / (".restore.tmp." + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (::mkdir(staging.c_str(), 0700) != 0) {
    return UnavailableError("cannot create " + staging.string() + ": " + std::strerror(errno));
  }
  Status s = CopyBackup(backup, result.manifest, staging);
  if (s.ok() && !old.empty()) {
    auto aside = MakeAsideDir(dir.path(), options.now);
    s = aside.status();
    if (aside.ok()) result.moved_aside = *aside;
  }
  if (s.ok()) s = PutInPlace(dir, staging, old, result.moved_aside);
  if (s.ok()) s = RelocateJobDirs(result.manifest.data_dir, dir.path());
  if (!s.ok()) {
    fs::remove_all(staging, ec);
    return s;
  }
  return result;
}

}  // namespace trainyard::server
