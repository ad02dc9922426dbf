#include "server/tree_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sqlite/backup.h"

namespace trainyard::server {
namespace {

namespace fs = std::filesystem;

Status Errno(const std::string& what, const fs::path& path) {
  const int err = errno;
  std::string msg = what + " " + path.string() + ": " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) msg += " (" + sqlite::FreeSpaceText(path.parent_path()) + ")";
  return UnavailableError(msg);
}

// Mode, owner and times of `st` onto the open `fd`. chown fails for a non-root caller on files of
// other users: then the copy stays the caller's, as documented.
Status KeepAttributes(int fd, const struct stat& st, const fs::path& to) {
  if (::geteuid() == 0) (void)::fchown(fd, st.st_uid, st.st_gid);
  if (::fchmod(fd, st.st_mode & 07777) != 0) return Errno("cannot chmod", to);
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  if (::futimens(fd, times) != 0) return Errno("cannot set the times of", to);
  return Status::Ok();
}

Status CopyOpenFile(int in, const struct stat& st, const fs::path& to, int64_t* bytes) {
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) return Errno("cannot create", to);
  Status s = Status::Ok();
  char buf[1 << 16];
  *bytes = 0;
  while (s.ok()) {
    const ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = Errno("cannot read the source of", to);
    } else if (n == 0) {
      break;
    } else {
      for (ssize_t done = 0; s.ok() && done < n;) {
        const ssize_t w = ::write(out, buf + done, static_cast<size_t>(n - done));
        if (w < 0 && errno != EINTR) s = Errno("cannot write", to);
        if (w > 0) done += w;
      }
      *bytes += n;
    }
  }
  if (s.ok()) s = KeepAttributes(out, st, to);
  if (s.ok() && ::fsync(out) != 0) s = Errno("cannot fsync", to);
  ::close(out);
  return s;
}

std::string KindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  return "device";
}

// `rel` names `from` in SkippedEntry paths ("jobs/12").
Status CopyDir(const fs::path& from, const fs::path& to, const std::string& rel,
               TreeCopyStats* stats) {
  int dir_fd = ::open(from.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0 && errno == ENOENT) return Status::Ok();  // removed meanwhile
  if (dir_fd < 0) return Errno("cannot open", from);
  struct stat st {};
  ::fstat(dir_fd, &st);
  Status s = ::mkdir(to.c_str(), 0700) == 0 ? Status::Ok() : Errno("cannot create", to);
  std::error_code ec;
  for (fs::directory_iterator it(from, ec), end; s.ok() && !ec && it != end; it.increment(ec)) {
    const fs::path src = it->path();
    const std::string name = src.filename().string();
    struct stat entry {};
    if (::lstat(src.c_str(), &entry) != 0) {
      if (errno != ENOENT) s = Errno("cannot stat", src);
      continue;
    }
    if (S_ISDIR(entry.st_mode)) {
      s = CopyDir(src, to / name, rel + "/" + name, stats);
    } else if (S_ISREG(entry.st_mode)) {
      int64_t bytes = 0;
      s = CopyRegularFile(src, to / name, &bytes);
      if (s.ok() && bytes >= 0) {
        ++stats->files;
        stats->bytes += bytes;
      }
    } else {
      std::string target;
      if (S_ISLNK(entry.st_mode)) target = fs::read_symlink(src, ec).string();
      ec.clear();
      stats->skipped.push_back({rel + "/" + name, KindOf(entry.st_mode), target});
    }
  }
  if (s.ok() && ec) s = UnavailableError("cannot list " + from.string() + ": " + ec.message());
  // The directory's own attributes last: copying into it must not be refused by its mode, and
  // its times are those of its content.
  if (s.ok()) {
    int out = ::open(to.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (out < 0) {
      s = Errno("cannot open", to);
    } else {
      s = KeepAttributes(out, st, to);
      if (s.ok() && ::fsync(out) != 0) s = Errno("cannot fsync", to);
      ::close(out);
    }
  }
  ::close(dir_fd);
  return s;
}

}  // namespace

Status CopyRegularFile(const fs::path& from, const fs::path& to, int64_t* bytes) {
  int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0 && errno == ENOENT) {  // removed meanwhile: nothing to copy
    *bytes = -1;
    return Status::Ok();
  }
  if (in < 0) return Errno("cannot open", from);
  struct stat st {};
  Status s = ::fstat(in, &st) == 0 ? Status::Ok() : Errno("cannot stat", from);
  if (s.ok()) s = CopyOpenFile(in, st, to, bytes);
  ::close(in);
  return s;
}

Status CopyTree(const fs::path& from, const fs::path& to, TreeCopyStats* stats) {
  return CopyDir(from, to, from.filename().string(), stats);
}

StatusOr<TreeCopyStats> CountTree(const fs::path& dir) {
  TreeCopyStats stats;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) {
      ++stats.files;
      stats.bytes += static_cast<int64_t>(it->file_size(ec));
    }
  }
  if (ec) return UnavailableError("cannot list " + dir.string() + ": " + ec.message());
  return stats;
}

}  // namespace trainyard::server
