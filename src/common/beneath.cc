#include "common/beneath.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

namespace trainyard {
namespace {

std::atomic<bool> force_walk{false};
// Set once openat2 answered ENOSYS (an old kernel, or a seccomp filter that hides it).
std::atomic<bool> no_openat2{false};

// What an errno means for `rel`, in the contract's codes and words.
Status ErrnoStatus(int err, std::string_view rel, std::string_view what) {
  const std::string name = rel.empty() ? std::string(".") : std::string(rel);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return NotFoundError(name + ": no such file or directory");
    case ELOOP:
    case EXDEV:
      return FailedPreconditionError(
          name +
          ": a symbolic link is on the way or at the end (links written beneath the "
          "bucket root or a job directory are never followed, docs/security.md)");
    case EEXIST:
      return AlreadyExistsError(name + ": already exists");
    case ENOTEMPTY:
      return FailedPreconditionError(name + ": directory not empty");
    case EISDIR:
      return FailedPreconditionError(name + ": is a directory");
    default:
      return IoError("cannot " + std::string(what) + " " + name + ": " + std::strerror(err));
  }
}

// `rel` split at its last '/': ("a/b", "c") for "a/b/c", ("", "c") for "c".
std::pair<std::string_view, std::string_view> SplitLast(std::string_view rel) {
  size_t slash = rel.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), rel};
  return {rel.substr(0, slash), rel.substr(slash + 1)};
}

// openat2 beneath `dirfd`; -1 with errno set, errno ENOSYS where the kernel lacks it.
int OpenAt2(int dirfd, const std::string& rel, int flags, mode_t mode) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  while (true) {
    long fd = ::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof(how));
    if (fd >= 0 || errno != EINTR) return static_cast<int>(fd);
  }
}

int OpenAtRetry(int dirfd, const char* name, int flags, mode_t mode) {
  while (true) {
    int fd = ::openat(dirfd, name, flags, mode);
    if (fd >= 0 || errno != EINTR) return fd;
  }
}

// O_DIRECTORY | O_NOFOLLOW answers ENOTDIR for a link: make that ELOOP, as openat2 says.
void LinkIsEloop(int at, const char* name) {
  struct stat st {};
  if (errno == ENOTDIR && ::fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(st.st_mode)) {
    errno = ELOOP;
  }
}

// The directory `name` in `at`, never through a link. -1 with errno set (ELOOP for a link).
int OpenSubdir(int at, const char* name) {
  int fd = OpenAtRetry(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) LinkIsEloop(at, name);
  return fd;
}

// The openat walk: every directory on the way with O_NOFOLLOW | O_DIRECTORY, the last component
// with `flags | O_NOFOLLOW`. -1 with errno set.
int OpenWalk(int dirfd, std::string_view rel, int flags, mode_t mode) {
  UniqueFd current;
  int at = dirfd;
  size_t start = 0;
  while (true) {
    size_t slash = rel.find('/', start);
    std::string part(rel.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) {
      int fd = OpenAtRetry(at, part.c_str(), flags | O_NOFOLLOW, mode);
      if (fd < 0 && (flags & O_DIRECTORY) != 0) LinkIsEloop(at, part.c_str());
      return fd;
    }
    int next = OpenSubdir(at, part.c_str());
    if (next < 0) return -1;
    current = UniqueFd(next);
    at = next;
    start = slash + 1;
  }
}

// Opens `rel` ("" = the directory itself) beneath `dirfd` with the contract's rules.
int OpenBeneath(int dirfd, std::string_view rel, int flags, mode_t mode) {
  flags |= O_CLOEXEC | O_NOFOLLOW;
  if (rel.empty()) return OpenAtRetry(dirfd, ".", flags & ~O_NOFOLLOW, mode);
  if (!force_walk.load() && !no_openat2.load()) {
    // Without O_NOFOLLOW: RESOLVE_NO_SYMLINKS covers the last component too, and answers ELOOP
    // where O_DIRECTORY | O_NOFOLLOW would answer ENOTDIR for a link.
    int fd = OpenAt2(dirfd, std::string(rel), flags & ~O_NOFOLLOW, mode);
    if (fd >= 0 || errno != ENOSYS) return fd;
    no_openat2.store(true);
  }
  return OpenWalk(dirfd, rel, flags, mode);
}

mode_t TypeOf(int dirfd, const dirent& e) {
  switch (e.d_type) {
    case DT_REG:
      return S_IFREG;
    case DT_DIR:
      return S_IFDIR;
    case DT_LNK:
      return S_IFLNK;
    case DT_FIFO:
      return S_IFIFO;
    case DT_SOCK:
      return S_IFSOCK;
    case DT_CHR:
      return S_IFCHR;
    case DT_BLK:
      return S_IFBLK;
    default:
      break;
  }
  struct stat st {};
  if (::fstatat(dirfd, e.d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
  return st.st_mode & S_IFMT;
}

// Lists an open directory through a duplicate of its fd (closedir closes the duplicate).
StatusOr<std::vector<BeneathDir::Entry>> ListFd(int fd, std::string_view rel) {
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return ErrnoStatus(errno, rel, "list");
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    int err = errno;
    ::close(copy);
    return ErrnoStatus(err, rel, "list");
  }
  ::rewinddir(dir);  // a duplicate shares the offset with fds that listed before
  std::vector<BeneathDir::Entry> out;
  errno = 0;
  while (const dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") out.push_back({std::string(name), TypeOf(fd, *e)});
    errno = 0;
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) return ErrnoStatus(err, rel, "list");
  return out;
}

// Empties the open directory `fd` (its name `rel`, for messages), `depth` levels down.
Status EmptyDir(int fd, const std::string& rel, int depth) {
  if (depth > BeneathDir::kMaxDepth) {
    return FailedPreconditionError(rel + ": more than " + std::to_string(BeneathDir::kMaxDepth) +
                                   " nested directories; remove the rest by hand");
  }
  TY_ASSIGN_OR_RETURN(std::vector<BeneathDir::Entry> entries, ListFd(fd, rel));
  for (const BeneathDir::Entry& e : entries) {
    const std::string child = rel + "/" + e.name;
    if (::unlinkat(fd, e.name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR && errno != EPERM) return ErrnoStatus(errno, child, "remove");
    // A directory (or what replaced it since the listing: opened without following links).
    int sub = OpenSubdir(fd, e.name.c_str());
    if (sub < 0) {
      if (errno == ENOENT) continue;
      if (errno == ELOOP || errno == ENOTDIR) {  // swapped for a link or file: remove that
        if (::unlinkat(fd, e.name.c_str(), 0) == 0 || errno == ENOENT) continue;
      }
      return ErrnoStatus(errno, child, "remove");
    }
    UniqueFd sub_fd(sub);
    TY_RETURN_IF_ERROR(EmptyDir(sub, child, depth + 1));
    if (::unlinkat(fd, e.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, child, "remove");
    }
  }
  return Status::Ok();
}

std::string TempName(std::string_view leaf) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return "." + std::string(leaf.substr(0, 200)) + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(rng() % 1000000000);
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Status ValidateBeneathName(std::string_view rel, bool allow_empty) {
  if (rel.empty()) {
    return allow_empty ? Status::Ok() : InvalidArgumentError("an empty name names no file");
  }
  if (rel.front() == '/') {
    return InvalidArgumentError("'" + std::string(rel) + "' is not a relative name");
  }
  if (rel.find('\0') != std::string_view::npos) {
    return InvalidArgumentError("a name contains a NUL byte");
  }
  size_t start = 0;
  while (start <= rel.size()) {
    size_t slash = rel.find('/', start);
    std::string_view part =
        rel.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") {
      return InvalidArgumentError("'" + std::string(rel) + "' has an empty, '.' or '..' component");
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return Status::Ok();
}

void BeneathDir::ForceWalkForTesting(bool force) { force_walk.store(force); }

StatusOr<BeneathDir> BeneathDir::Open(const std::filesystem::path& path) {
  int fd = OpenAtRetry(AT_FDCWD, path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == ENOTDIR) return FailedPreconditionError(path.string() + " is not a directory");
    if (errno == ENOENT) return NotFoundError(path.string() + ": no such directory");
    return IoError("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  return BeneathDir(UniqueFd(fd));
}

StatusOr<BeneathDir> BeneathDir::Dup() const { return OpenDir(""); }

StatusOr<UniqueFd> BeneathDir::OpenFile(std::string_view rel, int flags, mode_t mode) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(rel, /*allow_empty=*/false));
  int fd = OpenBeneath(fd_.get(), rel, flags, mode);
  if (fd < 0) return ErrnoStatus(errno, rel, "open");
  return UniqueFd(fd);
}

StatusOr<UniqueFd> BeneathDir::OpenRegular(std::string_view rel) const {
  TY_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(rel, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, rel, "stat");
  if (!S_ISREG(st.st_mode)) return NotFoundError(std::string(rel) + ": not a regular file");
  // Reads of a regular file ignore O_NONBLOCK; cleared anyway so callers see plain blocking I/O.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

StatusOr<BeneathDir> BeneathDir::OpenDir(std::string_view rel) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(rel, /*allow_empty=*/true));
  int fd = OpenBeneath(fd_.get(), rel, O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0) return ErrnoStatus(errno, rel, "open");
  return BeneathDir(UniqueFd(fd));
}

StatusOr<BeneathDir> BeneathDir::MakeDirs(std::string_view rel, mode_t mode,
                                          const MadeFn& made) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(rel, /*allow_empty=*/true));
  TY_ASSIGN_OR_RETURN(BeneathDir current, Dup());
  size_t start = 0;
  while (start < rel.size()) {
    size_t slash = rel.find('/', start);
    const size_t end = slash == std::string_view::npos ? rel.size() : slash;
    const std::string part(rel.substr(start, end - start));
    const std::string so_far(rel.substr(0, end));
    bool created = ::mkdirat(current.fd(), part.c_str(), mode) == 0;
    if (!created && errno != EEXIST) return ErrnoStatus(errno, so_far, "create directory");
    int next = OpenSubdir(current.fd(), part.c_str());
    if (next < 0) {
      if (errno == ENOTDIR) return FailedPreconditionError(so_far + ": not a directory");
      return ErrnoStatus(errno, so_far, "open directory");
    }
    BeneathDir child{UniqueFd(next)};
    if (created && made) TY_RETURN_IF_ERROR(made(child.fd(), so_far));
    current = std::move(child);
    start = end + 1;
  }
  return current;
}

StatusOr<struct stat> BeneathDir::Stat(std::string_view rel) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(rel, /*allow_empty=*/true));
  struct stat st {};
  if (rel.empty()) {
    if (::fstat(fd_.get(), &st) != 0) return ErrnoStatus(errno, rel, "stat");
    return st;
  }
  auto [parent, leaf] = SplitLast(rel);
  TY_ASSIGN_OR_RETURN(BeneathDir dir, OpenDir(parent));
  if (::fstatat(dir.fd(), std::string(leaf).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, rel, "stat");
  }
  return st;
}

Status BeneathDir::Unlink(std::string_view rel) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(rel, /*allow_empty=*/false));
  auto [parent, leaf] = SplitLast(rel);
  TY_ASSIGN_OR_RETURN(BeneathDir dir, OpenDir(parent));
  if (::unlinkat(dir.fd(), std::string(leaf).c_str(), 0) != 0) {
    return ErrnoStatus(errno == EPERM ? EISDIR : errno, rel, "remove");
  }
  return Status::Ok();
}

Status BeneathDir::RemoveDir(std::string_view rel) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(rel, /*allow_empty=*/false));
  auto [parent, leaf] = SplitLast(rel);
  TY_ASSIGN_OR_RETURN(BeneathDir dir, OpenDir(parent));
  if (::unlinkat(dir.fd(), std::string(leaf).c_str(), AT_REMOVEDIR) != 0) {
    return ErrnoStatus(errno == EEXIST ? ENOTEMPTY : errno, rel, "remove directory");
  }
  return Status::Ok();
}

Status BeneathDir::RemoveAll(std::string_view rel) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(rel, /*allow_empty=*/false));
  auto [parent, leaf] = SplitLast(rel);
  auto dir = OpenDir(parent);
  if (!dir.ok()) return dir.status().code() == StatusCode::kNotFound ? Status::Ok() : dir.status();
  const std::string name(leaf);
  if (::unlinkat(dir->fd(), name.c_str(), 0) == 0 || errno == ENOENT) return Status::Ok();
  if (errno != EISDIR && errno != EPERM) return ErrnoStatus(errno, rel, "remove");
  int sub = OpenSubdir(dir->fd(), name.c_str());
  if (sub < 0) {
    if (errno == ENOENT) return Status::Ok();
    if ((errno == ELOOP || errno == ENOTDIR) && ::unlinkat(dir->fd(), name.c_str(), 0) == 0) {
      return Status::Ok();
    }
    return ErrnoStatus(errno, rel, "remove");
  }
  UniqueFd sub_fd(sub);
  TY_RETURN_IF_ERROR(EmptyDir(sub, std::string(rel), 1));
  if (::unlinkat(dir->fd(), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, rel, "remove directory");
  }
  return Status::Ok();
}

Status BeneathDir::Rename(std::string_view from, const BeneathDir& to_dir,
                          std::string_view to) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(from, /*allow_empty=*/false));
  TY_RETURN_IF_ERROR(ValidateBeneathName(to, /*allow_empty=*/false));
  auto [from_parent, from_leaf] = SplitLast(from);
  auto [to_parent, to_leaf] = SplitLast(to);
  TY_ASSIGN_OR_RETURN(BeneathDir src, OpenDir(from_parent));
  TY_ASSIGN_OR_RETURN(BeneathDir dst, to_dir.OpenDir(to_parent));
  if (::renameat(src.fd(), std::string(from_leaf).c_str(), dst.fd(),
                 std::string(to_leaf).c_str()) != 0) {
    return ErrnoStatus(errno, to, "rename onto");
  }
  return Status::Ok();
}

StatusOr<std::vector<BeneathDir::Entry>> BeneathDir::List(std::string_view rel) const {
  TY_ASSIGN_OR_RETURN(BeneathDir dir, OpenDir(rel));
  return ListFd(dir.fd(), rel);
}

StatusOr<std::string> BeneathDir::ReadFile(std::string_view rel, size_t max_bytes) const {
  TY_ASSIGN_OR_RETURN(UniqueFd fd, OpenRegular(rel));
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, rel, "read");
    if (n == 0) return out;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return FailedPreconditionError(std::string(rel) + ": larger than " +
                                     std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

Status BeneathDir::ReplaceFile(std::string_view rel, std::string_view content, bool durable,
                               mode_t mode) const {
  TY_RETURN_IF_ERROR(ValidateBeneathName(rel, /*allow_empty=*/false));
  auto [parent, leaf] = SplitLast(rel);
  TY_ASSIGN_OR_RETURN(BeneathDir dir, OpenDir(parent));
  const std::string tmp = TempName(leaf);
  int fd = OpenAtRetry(dir.fd(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoStatus(errno, rel, "create a temp file for");
  UniqueFd file(fd);
  Status s = Status::Ok();
  for (size_t off = 0; off < content.size() && s.ok();) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      s = ErrnoStatus(errno, rel, "write");
    else
      off += static_cast<size_t>(n);
  }
  if (s.ok() && ::fchmod(fd, mode) != 0) s = ErrnoStatus(errno, rel, "chmod");
  if (s.ok() && durable && ::fsync(fd) != 0) s = ErrnoStatus(errno, rel, "fsync");
  if (s.ok() && ::renameat(dir.fd(), tmp.c_str(), dir.fd(), std::string(leaf).c_str()) != 0) {
    s = ErrnoStatus(errno, rel, "rename onto");
  }
  if (!s.ok()) {
    ::unlinkat(dir.fd(), tmp.c_str(), 0);
    return s;
  }
  if (durable && ::fsync(dir.fd()) != 0) return ErrnoStatus(errno, rel, "fsync the directory of");
  return Status::Ok();
}

}  // namespace trainyard
