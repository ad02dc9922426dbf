#include "sqlite/backup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace trainyard::sqlite {
namespace {

namespace fs = std::filesystem;

Status Errno(const std::string& what, const fs::path& path) {
  return UnavailableError(what + " " + path.string() + ": " + std::strerror(errno));
}

Status SyncFile(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? Status::Ok() : Errno("cannot fsync", path);
}

void RemoveTemp(const fs::path& tmp) {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) {
    ::unlink((tmp.string() + suffix).c_str());
  }
}

// The backup proper, into `tmp` (which it creates): every page in one step, so the copy is one
// read transaction of the source.
Status BackupInto(sqlite3* from, const fs::path& tmp) {
  sqlite3* dest = nullptr;
  if (sqlite3_open_v2(tmp.c_str(), &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = dest ? sqlite3_errmsg(dest) : "out of memory";
    sqlite3_close(dest);
    return UnavailableError("cannot create " + tmp.string() + ": " + msg);
  }
  Status status = Status::Ok();
  sqlite3_backup* backup = sqlite3_backup_init(dest, "main", from, "main");
  if (backup == nullptr) {
    status = UnavailableError(std::string("cannot start the copy: ") + sqlite3_errmsg(dest));
  } else {
    int rc = SQLITE_OK;
    // BUSY/LOCKED: a writer holds the source's lock this instant (rollback-journal databases);
    // retry for up to 10 s, as a busy timeout would.
    for (int tries = 0; tries < 200; ++tries) {
      rc = sqlite3_backup_step(backup, -1);
      if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
      sqlite3_sleep(50);
    }
    sqlite3_backup_finish(backup);
    if (rc != SQLITE_DONE) {
      status = UnavailableError(std::string("cannot copy: ") + sqlite3_errstr(rc) + " (" +
                                sqlite3_errmsg(dest) + ")");
    }
  }
  // The copy takes the source's WAL mode with its pages; a rollback-journal file is one
  // self-contained file that read-only openers leave no -wal/-shm beside (a server that opens
  // it sets WAL again).
  if (status.ok() &&
      sqlite3_exec(dest, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr) != SQLITE_OK) {
    status = UnavailableError(std::string("cannot finish the copy: ") + sqlite3_errmsg(dest));
  }
  if (sqlite3_close(dest) != SQLITE_OK && status.ok()) {
    status = UnavailableError("cannot close " + tmp.string());
  }
  return status;
}

}  // namespace

int64_t FreeBytes(const fs::path& dir) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return -1;
  return static_cast<int64_t>(vfs.f_bavail) * static_cast<int64_t>(vfs.f_frsize);
}

std::string FreeSpaceText(const fs::path& dir) {
  const int64_t free = FreeBytes(dir);
  if (free < 0) return "free space in " + dir.string() + " unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(free) / (1024.0 * 1024.0));
  return std::string(buf) + " free in " + dir.string();
}

Status CopyDatabase(sqlite3* from, const fs::path& to) {
  const fs::path dir = to.has_parent_path() ? to.parent_path() : fs::path(".");
  fs::path tmp = to;
  tmp += ".tmp." + std::to_string(::getpid());
  RemoveTemp(tmp);
  Status s = BackupInto(from, tmp);
  if (s.ok() && ::chmod(tmp.c_str(), 0600) != 0) s = Errno("cannot chmod 0600", tmp);
  if (s.ok()) s = SyncFile(tmp);
  if (s.ok() && ::rename(tmp.c_str(), to.c_str()) != 0) s = Errno("cannot rename onto", to);
  if (s.ok()) s = SyncFile(dir);
  if (!s.ok()) {
    RemoveTemp(tmp);
    return UnavailableError("cannot write the database copy " + to.string() + " (" +
                            FreeSpaceText(dir) + "): " + s.message());
  }
  return Status::Ok();
}

Status CopyDatabaseFile(const fs::path& path, const fs::path& to) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return NotFoundError("no database file " + path.string());
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return UnavailableError("cannot open " + path.string() + ": " + msg);
  }
  sqlite3_busy_timeout(db, 10000);
  Status s = CopyDatabase(db, to);
  sqlite3_close(db);
  return s;
}

}  // namespace trainyard::sqlite
