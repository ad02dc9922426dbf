#include "common/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "common/disk_fault.h"

namespace trainyard {
namespace fs = std::filesystem;

namespace {

std::string Errno(const fs::path& p, std::string_view what) {
  return std::string(what) + " " + p.string() + ": " + std::strerror(errno);
}

// A failed write, create or rename of `p`: RESOURCE_EXHAUSTED when the file system is full or
// read-only (disk_fault.h: callers keep such work to retry), else an I/O error.
Status WriteError(const fs::path& p, std::string_view what) {
  const int err = errno;
  std::string msg = Errno(p, what);
  if (ClassifyWriteError(err, p) != DiskFault::kNone) return ResourceExhaustedError(std::move(msg));
  return IoError(std::move(msg));
}

// "dir/" and "dir" name the same directory, but appending a suffix to "dir/" would put the temp
// name inside it. Vertex-style AIP_* dirs always end in '/'.
fs::path WithoutTrailingSlash(fs::path p) {
  while (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

std::string UniqueSuffix() {
  static std::atomic<unsigned> counter{0};
  return ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

}  // namespace

StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return NotFoundError("file not found: " + path.string());
    return IoError(Errno(path, "cannot open"));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(Errno(path, "cannot read"));
  return ss.str();
}

Status FsyncPath(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(Errno(path, "cannot open for fsync"));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return IoError(Errno(path, "fsync failed for"));
  return Status::Ok();
}

Status MakeDirs(const fs::path& path) {
  if (path.empty()) return Status::Ok();
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    std::string msg = "cannot create directory " + path.string() + ": " + ec.message();
    if (ClassifyWriteError(ec.value(), path) != DiskFault::kNone) {
      return ResourceExhaustedError(std::move(msg));
    }
    return IoError(std::move(msg));
  }
  return Status::Ok();
}

Status WriteAll(int fd, std::string_view data, const fs::path& path) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return WriteError(path, "cannot write");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

namespace {

// Streams `content` into an existing special file (device, FIFO, socket). Renaming a temp file
// over it would replace e.g. /dev/null with a regular file for the whole machine.
Status WriteToSpecialFile(const fs::path& path, std::string_view content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return IoError(Errno(path, "cannot open"));
  Status s = WriteAll(fd, content, path);
  ::close(fd);
  return s;
}

Status WriteThenRename(const fs::path& path_in, std::string_view content, bool sync) {
  fs::path path = WithoutTrailingSlash(path_in);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      return FailedPreconditionError(path.string() + " is a directory; expected a file path");
    }
    return WriteToSpecialFile(path, content);
  }
  fs::path parent = path.parent_path();
  if (parent.empty()) parent = ".";
  TY_RETURN_IF_ERROR(MakeDirs(parent));
  fs::path tmp = path;
  tmp += UniqueSuffix();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return WriteError(tmp, "cannot create");
  if (Status s = WriteAll(fd, content, tmp); !s.ok()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  if (sync && ::fsync(fd) != 0) {
    Status s = WriteError(tmp, "fsync failed for");
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = WriteError(path, "cannot rename temp file onto");
    ::unlink(tmp.c_str());
    return s;
  }
  return sync ? FsyncPath(parent) : Status::Ok();
}

}  // namespace

Status WriteFileAtomic(const fs::path& path, std::string_view content) {
  return WriteThenRename(path, content, /*sync=*/true);
}

Status ReplaceFile(const fs::path& path, std::string_view content) {
  return WriteThenRename(path, content, /*sync=*/false);
}

StatusOr<fs::path> MakeStagingDir(const fs::path& final_dir_in) {
  fs::path final_dir = WithoutTrailingSlash(final_dir_in);
  fs::path staging = final_dir;
  staging += UniqueSuffix();
  std::error_code ec;
  fs::remove_all(staging, ec);
  TY_RETURN_IF_ERROR(MakeDirs(staging));
  return staging;
}

Status CommitDirectory(const fs::path& staging_dir, const fs::path& final_dir_in) {
  fs::path final_dir = WithoutTrailingSlash(final_dir_in);
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(staging_dir, ec)) {
    if (entry.is_regular_file()) TY_RETURN_IF_ERROR(FsyncPath(entry.path()));
  }
  if (ec) return IoError("cannot list " + staging_dir.string() + ": " + ec.message());
  TY_RETURN_IF_ERROR(FsyncPath(staging_dir));
  fs::path old;
  if (fs::exists(final_dir, ec)) {
    old = final_dir;
    old += UniqueSuffix() + ".old";
    fs::rename(final_dir, old, ec);
    if (ec) return IoError("cannot move aside " + final_dir.string() + ": " + ec.message());
  }
  fs::rename(staging_dir, final_dir, ec);
  if (ec) return IoError("cannot rename " + staging_dir.string() + ": " + ec.message());
  fs::path parent = final_dir.parent_path();
  TY_RETURN_IF_ERROR(FsyncPath(parent.empty() ? fs::path(".") : parent));
  if (!old.empty()) fs::remove_all(old, ec);
  return Status::Ok();
}

}  // namespace trainyard
