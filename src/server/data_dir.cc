#include "server/data_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "common/disk_fault.h"
#include "common/file_util.h"

namespace trainyard::server {

std::string DefaultServerDataDir() {
  if (::geteuid() == 0) return "/var/lib/trainyard/server";
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.trainyard/server";
  }
  return "/tmp/trainyard-server";
}

namespace {

// Whether the pid server.lock names (the server that last took the lock) is a live process.
bool PreviousServerAlive(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  const long pid = n > 0 ? std::strtol(buf, nullptr, 10) : 0;
  return pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace

StatusOr<DataDir> DataDir::Lock(const std::filesystem::path& dir) {
  const std::filesystem::path path =
      std::filesystem::absolute(dir.empty() ? std::filesystem::path(DefaultServerDataDir()) : dir);
  TY_RETURN_IF_ERROR(MakeDirs(path / "jobs"));
  const std::filesystem::path lock = path / "server.lock";
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create " + lock.string() + ": " + std::strerror(errno));
  // flock, not fcntl locks: it belongs to this open file, so a second DataDir in the same process
  // is refused too, and it is released when the fd closes (or the process dies).
  // The server that wrote server.lock may be dead while a process it was starting still holds the
  // lock for a moment (a fork not yet exec'd: the fd is closed on exec); a restart right after a
  // kill -9 waits that moment out instead of being refused.
  bool locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (!locked && !PreviousServerAlive(fd)) {
    for (int i = 0; i < 150 && !locked; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    }
  }
  if (!locked) {
    ::close(fd);
    return FailedPreconditionError("another trainyard server is using --data-dir " + path.string() +
                                   "; stop it or choose another --data-dir");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  (void)::ftruncate(fd, 0);
  (void)::pwrite(fd, pid.data(), pid.size(), 0);
  return DataDir(path, fd);
}

DataDir::DataDir(DataDir&& other) noexcept
    : path_(std::move(other.path_)), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

DataDir& DataDir::operator=(DataDir&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    path_ = std::move(other.path_);
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

DataDir::~DataDir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

// SQLite gives its -wal/-shm files the database file's mode, but they may predate a chmod.
Status DataDir::MakeDatabasesPrivate() const {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
    const std::string name = entry.path().filename().string();
    const bool db = name.ends_with(".db") || name.ends_with(".db-wal") ||
                    name.ends_with(".db-shm") || name.ends_with(".db-journal");
    if (db && entry.is_regular_file() && ::chmod(entry.path().c_str(), 0600) != 0) {
      return FailedPreconditionError("cannot chmod " + entry.path().string() + ": " +
                                     std::strerror(errno));
    }
  }
  if (ec) return FailedPreconditionError("cannot list " + path_.string() + ": " + ec.message());
  return Status::Ok();
}

Status DataDir::LetOthersPassThrough() const {
  for (const std::filesystem::path& dir : {path_, jobs_dir()}) {
    if (::chmod(dir.c_str(), 0711) != 0) {
      return FailedPreconditionError("cannot chmod " + dir.string() + ": " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

}  // namespace trainyard::server

namespace trainyard::server {

bool DataDir::Draining() const { return std::filesystem::exists(path_ / "draining"); }

Status DataDir::SetDraining(bool draining) const {
  const std::filesystem::path marker = path_ / "draining";
  if (draining) {
    Status written = WriteFileAtomic(marker, "drained by an admin; trainyard admin resume\n");
    if (written.ok()) written = FsyncPath(path_);
    return AsDiskFault(written, kDataDirPlace, path_);  // the answer names no server path
  }
  if (::unlink(marker.c_str()) != 0 && errno != ENOENT) {
    const int err = errno;
    const std::string detail = std::string("unlink: ") + std::strerror(err);
    if (DiskFault fault = ClassifyWriteError(err, marker); fault != DiskFault::kNone) {
      return DiskFaultError(fault, kDataDirPlace, marker, detail);
    }
    return UnavailableError("cannot remove the drain marker " + marker.string() + ": " +
                            std::strerror(err));
  }
  return FsyncPath(path_);
}

}  // namespace trainyard::server
