// Files named relative to an open directory, resolved without following any symbolic link and
// without leaving that directory.
//
// Why: buckets and job dirs hold what replicas wrote, and a root server's replicas run as other
// users (docs/security.md). A name the server opens there by path, even one that passed
// ValidateObjectName, follows a link a replica planted (`ln -s /etc/shadow bkt/x`,
// `ln -s /etc bkt/out`), so the server would read, write, chown or delete outside the tree as
// root; a realpath() check first is a race against a running replica. Every call here resolves
// its name component by component under the directory's fd: openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) where the kernel has it (Linux 5.6+), else an
// openat(O_NOFOLLOW | O_DIRECTORY) walk. The fd pins the directory itself: renaming it, or
// replacing a name above it with a link, does not move what the calls reach.
//
// Contracts:
//  - `rel` is a relative name: components separated by '/', none empty, "." or ".." (one
//    trailing '/' is not allowed either). "" names the directory itself where a call allows it.
//    Anything else is INVALID_ARGUMENT before the file system is touched.
//  - A symbolic link anywhere on the way, or as the last component, is never followed:
//    FAILED_PRECONDITION ("... is a symbolic link ..."), except where a call says otherwise
//    (Unlink and RemoveAll remove the link itself; List reports it as a link).
//  - A missing name (or a file where a directory is needed): NOT_FOUND. Other errors: UNAVAILABLE
//    (I/O) with the errno text. Messages name `rel`, never the directory's absolute path, so they
//    can reach clients without telling them where the server keeps its files.
// Thread-safety: a BeneathDir is immutable after Open; every method may be called concurrently.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard {

// Owns a file descriptor (closed on destruction). Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

class BeneathDir {
 public:
  // One entry of a directory listing; `type` is S_IFREG, S_IFDIR, S_IFLNK, ... (from d_type, or
  // an fstatat that does not follow links where the file system gives none).
  struct Entry {
    std::string name;
    mode_t type = 0;
  };
  // Called for each directory MakeDirs creates, with an fd of it (opened without following
  // links) and its name relative to the BeneathDir: the place to fchown/fchmod it race-free.
  using MadeFn = std::function<Status(int dir_fd, const std::string& rel)>;

  BeneathDir() = default;
  // Opens the directory `path`. `path` is the operator's (a configured root): links in it are
  // followed like in any configured path; only names beneath it are held to the rules above.
  // NOT_FOUND when missing, FAILED_PRECONDITION when not a directory.
  static StatusOr<BeneathDir> Open(const std::filesystem::path& path);

  bool valid() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }
  // A second handle on the same directory (dup).
  StatusOr<BeneathDir> Dup() const;

  // Opens `rel` with open(2) `flags` (O_CLOEXEC and O_NOFOLLOW are always added) and `mode` when
  // creating. With O_CREAT and without O_EXCL an existing link is still refused, never followed.
  StatusOr<UniqueFd> OpenFile(std::string_view rel, int flags, mode_t mode = 0) const;
  // Opens an existing regular file for reading. O_NONBLOCK, so that a FIFO a replica left cannot
  // block the caller; anything but a regular file (FIFO, socket, device, directory) is NOT_FOUND
  // like a missing file, checked with fstat on the open fd.
  StatusOr<UniqueFd> OpenRegular(std::string_view rel) const;
  // Opens the directory `rel` ("" = a second handle on this one).
  StatusOr<BeneathDir> OpenDir(std::string_view rel) const;
  // Creates `rel` and its missing parents with mkdir's `mode` (the umask applies, as for
  // mkdir(2); set exact modes and owners in `made`), calling `made` for each one created, in
  // order; returns the deepest. An existing component that is not
  // a directory is FAILED_PRECONDITION naming it.
  StatusOr<BeneathDir> MakeDirs(std::string_view rel, mode_t mode, const MadeFn& made = {}) const;

  // lstat of `rel` ("" = this directory): a link is described, not followed.
  StatusOr<struct stat> Stat(std::string_view rel) const;
  // Removes a file or a link (the link itself); a directory is FAILED_PRECONDITION.
  Status Unlink(std::string_view rel) const;
  // Removes the empty directory `rel`: FAILED_PRECONDITION when it is not empty.
  Status RemoveDir(std::string_view rel) const;
  // Removes `rel` and everything beneath it. Links are removed, never followed, also when a
  // directory is swapped for a link during the walk. OK when `rel` does not exist. Trees deeper
  // than kMaxDepth levels are FAILED_PRECONDITION (what was reached is removed).
  Status RemoveAll(std::string_view rel) const;
  // renameat(2) of `from` (beneath this) to `to` (beneath `to_dir`); replaces a file or link at
  // `to`, never follows one.
  Status Rename(std::string_view from, const BeneathDir& to_dir, std::string_view to) const;
  // The entries of the directory `rel` ("" = this one), without "." and "..", unsorted.
  StatusOr<std::vector<Entry>> List(std::string_view rel = "") const;

  // Reads the regular file `rel` whole; FAILED_PRECONDITION when larger than `max_bytes`.
  StatusOr<std::string> ReadFile(std::string_view rel, size_t max_bytes) const;
  // Replaces the file `rel` with `content` through a temp file in the same directory and a
  // rename (readers see the old or the new content); `durable` fsyncs the file and directory.
  // The file gets `mode`.
  Status ReplaceFile(std::string_view rel, std::string_view content, bool durable,
                     mode_t mode = 0644) const;

  static constexpr int kMaxDepth = 256;

  // For tests: resolve with the openat walk even where openat2 exists (both must behave alike).
  static void ForceWalkForTesting(bool force);

 private:
  explicit BeneathDir(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// INVALID_ARGUMENT unless `rel` is a name BeneathDir accepts (see the contract above);
// `allow_empty` lets "" name the directory itself.
Status ValidateBeneathName(std::string_view rel, bool allow_empty);

}  // namespace trainyard
