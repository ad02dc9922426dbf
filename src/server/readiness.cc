#include "server/readiness.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace trainyard::server {

namespace {

std::string Mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

Status CheckReadiness(const std::filesystem::path& data_dir, uint64_t min_free_bytes) {
  struct statvfs fs {};
  if (::statvfs(data_dir.c_str(), &fs) != 0) {
    return UnavailableError("data dir " + data_dir.string() + ": " + std::strerror(errno));
  }
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes < min_free_bytes) {
    return UnavailableError("data dir " + data_dir.string() + " has " + Mib(free_bytes) +
                            " free, below the " + Mib(min_free_bytes) +
                            " new work needs (--min-free-disk-mib): free space there");
  }
  const std::string probe = (data_dir / (".readyz-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const bool written = fd >= 0 && ::write(fd, "1", 1) == 1 && ::fsync(fd) == 0;
  const int error = errno;
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  if (!written) {
    return UnavailableError("data dir " + data_dir.string() + " does not take a write (" +
                            std::strerror(error) + "): new jobs could not be recorded");
  }
  return Status::Ok();
}

}  // namespace trainyard::server
