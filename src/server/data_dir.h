// DataDir: the server's data dir and the one policy for it (docs/security.md):
//   - where it is by default (DefaultServerDataDir);
//   - one server per data dir, enforced by an flock on <dir>/server.lock that dies with the
//     process (a server killed with -9 can be restarted at once);
//   - the databases in it (*.db and SQLite's -wal/-shm/-journal) are the server's alone: 0600;
//   - when replicas run as other users, the dir and its jobs/ pass them through (0711) to their
//     work dirs without letting them list or read it.
// Layout: <dir>/jobs/ (one work dir per job), jobs.db, auth.db, images.yaml (optional),
// draining (the drain marker).
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace trainyard::server {

// The server's --data-dir default: ~/.trainyard/server, or /var/lib/trainyard/server for root
// (a root server's replicas run as other users, who cannot enter root's private home).
std::string DefaultServerDataDir();

class DataDir {
 public:
  // Makes `dir` (empty = DefaultServerDataDir()) and its jobs/ and takes the server lock, writing
  // this process's pid into server.lock. FAILED_PRECONDITION "another trainyard server is using
  // --data-dir DIR; stop it or choose another --data-dir" when another DataDir holds it (in this
  // or another process); UNAVAILABLE when the dir or lock file cannot be made.
  static StatusOr<DataDir> Lock(const std::filesystem::path& dir);

  DataDir(DataDir&& other) noexcept;
  DataDir& operator=(DataDir&& other) noexcept;
  DataDir(const DataDir&) = delete;
  DataDir& operator=(const DataDir&) = delete;
  ~DataDir();  // releases the lock

  const std::filesystem::path& path() const { return path_; }  // absolute
  std::filesystem::path jobs_dir() const { return path_ / "jobs"; }

  // chmod 0600 on every database file now in the dir. FAILED_PRECONDITION naming the file.
  Status MakeDatabasesPrivate() const;
  // chmod 0711 on the dir and jobs/: other users may pass through, not list. FAILED_PRECONDITION
  // naming the dir.
  Status LetOthersPassThrough() const;

  // The drain marker (<dir>/draining): present while an admin has the server drained, so a
  // restart stays drained until `trainyard admin resume`. Written temp-then-rename and synced.
  bool Draining() const;
  // RESOURCE_EXHAUSTED in common/disk_fault.h's words when the data dir is full or read-only,
  // else UNAVAILABLE naming the marker when it cannot be written or removed.
  Status SetDraining(bool draining) const;

 private:
  DataDir(std::filesystem::path path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}

  std::filesystem::path path_;
  int lock_fd_ = -1;
};

}  // namespace trainyard::server
