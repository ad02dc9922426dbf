#include "common/disk_fault.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

namespace trainyard {
namespace fs = std::filesystem;

namespace {

// statvfs of the nearest existing ancestor: the file that failed may never have been created.
bool StatFileSystem(fs::path path, struct statvfs* vfs) {
  for (int i = 0; i < 64 && !path.empty(); ++i) {
    if (::statvfs(path.c_str(), vfs) == 0) return true;
    if (path == path.parent_path()) break;
    path = path.parent_path();
  }
  return false;
}

// EROFS from a file system that is mounted read-write: the kernel stopped its writes after an
// error (ext4's errors=remount-ro marks it "emergency_ro"; a remount read-write does not lift
// that, only a check and a new mount do).
bool TurnedReadOnlyByError(const fs::path& path) {
  struct statvfs vfs {};
  return StatFileSystem(path, &vfs) && (vfs.f_flag & ST_RDONLY) == 0;
}

std::string MiB(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

struct Reporter {
  std::mutex mu;
  std::function<void(const std::string&)> fn;
  std::map<std::string, std::chrono::steady_clock::time_point> last_sent;
};

Reporter& TheReporter() {
  static Reporter* reporter = new Reporter();  // never destroyed: used from any thread at exit
  return *reporter;
}

void Report(const std::string& line) {
  Reporter& r = TheReporter();
  std::function<void(const std::string&)> fn;
  {
    std::lock_guard lock(r.mu);
    const auto now = std::chrono::steady_clock::now();
    auto [it, fresh] = r.last_sent.try_emplace(line, now);
    if (!fresh && now - it->second < std::chrono::seconds(10)) return;
    it->second = now;
    if (r.last_sent.size() > 256) r.last_sent.clear();  // bounded; a repeat costs one line
    fn = r.fn;
  }
  if (fn) {
    fn(line);
  } else {
    std::fprintf(stderr, "trainyard: %s\n", line.c_str());
  }
}

}  // namespace

DiskFault ClassifyWriteError(int err, const fs::path& path) {
  if (err == EROFS) return DiskFault::kReadOnly;
  if (err != ENOSPC && err != EDQUOT) return DiskFault::kNone;
  struct statvfs vfs {};
  if (StatFileSystem(path, &vfs) && vfs.f_files > 0 && vfs.f_favail == 0) {
    return DiskFault::kNoInodes;
  }
  return DiskFault::kFull;
}

std::string_view DiskFaultReason(DiskFault fault) {
  switch (fault) {
    case DiskFault::kNone:
      return "";
    case DiskFault::kFull:
      return "disk full";
    case DiskFault::kNoInodes:
      return "no free inodes";
    case DiskFault::kReadOnly:
      return "read-only file system";
  }
  return "";
}

std::string DiskFaultCondition(DiskFault fault, std::string_view where, const fs::path& path) {
  struct statvfs vfs {};
  const bool known = StatFileSystem(path, &vfs);
  const std::string free_text =
      known ? MiB(static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize)) + " free"
            : "free space unknown";
  std::string text(where);
  switch (fault) {
    case DiskFault::kReadOnly:
      return text + (TurnedReadOnlyByError(path)
                         ? " is read-only (its file system turned read-only after an error)"
                         : " is read-only");
    case DiskFault::kNoInodes:
      return text + " has no free inodes (0 of " + std::to_string(known ? vfs.f_files : 0) +
             " left; " + free_text + ")";
    case DiskFault::kFull:
    case DiskFault::kNone:
      break;
  }
  return text + " is full (" + free_text + ")";
}

Status DiskFaultError(DiskFault fault, std::string_view where, const fs::path& path,
                      std::string_view detail) {
  std::string msg = DiskFaultCondition(fault, where, path) + "; nothing was stored: ";
  switch (fault) {
    case DiskFault::kReadOnly:
      msg += TurnedReadOnlyByError(path)
                 ? "stop the server, check the file system (fsck), mount it again and start the "
                   "server"
                 : "remount it read-write and retry";
      break;
    case DiskFault::kNoInodes:
      msg += "remove files there and retry";
      break;
    case DiskFault::kFull:
    case DiskFault::kNone:
      msg += "free space there and retry";
      break;
  }
  const DiskFault reason = fault == DiskFault::kNone ? DiskFault::kFull : fault;
  Report(std::string(DiskFaultReason(reason)) + ": " + path.string() + ": " + std::string(detail));
  return ResourceExhaustedError(std::move(msg));
}

int WriteProbeErrno(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

DiskFault DiskFaultOf(const Status& status, const fs::path& root) {
  if (status.ok()) return DiskFault::kNone;
  for (int err : {ENOSPC, EDQUOT, EROFS}) {
    if (status.message().find(std::strerror(err)) != std::string::npos) {
      return ClassifyWriteError(err, root);
    }
  }
  return DiskFault::kNone;
}

Status AsDiskFault(const Status& status, std::string_view where, const fs::path& root) {
  const DiskFault fault = DiskFaultOf(status, root);
  return fault == DiskFault::kNone ? status : DiskFaultError(fault, where, root, status.message());
}

bool IsDiskFault(const Status& status) { return status.code() == StatusCode::kResourceExhausted; }

void SetDiskFaultReporter(std::function<void(const std::string& line)> reporter) {
  Reporter& r = TheReporter();
  std::lock_guard lock(r.mu);
  r.fn = std::move(reporter);
}

}  // namespace trainyard
