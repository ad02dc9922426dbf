#include "storage/fs_object_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "storage/block_writer.h"
#include "storage/object_hash.h"

namespace trainyard::storage {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kObjectIoBlock = 1 << 20;

std::string ErrnoText() { return std::strerror(errno); }

TimePoint FromTimespec(const timespec& ts) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

int64_t Nanos(const timespec& ts) { return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec; }

int64_t Micros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

TimePoint FromMicros(int64_t us) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(us)));
}

// What a sidecar says, and whether it still describes the file (size and mtime match).
struct Sidecar {
  bool fresh = false;
  json j;
};

// Sidecars are a few hundred bytes plus user metadata; anything larger is not one of ours.
constexpr size_t kMaxSidecarBytes = 4 << 20;

Sidecar ReadSidecar(const BeneathDir& meta, const std::string& rel, const struct stat& st) {
  Sidecar s;
  auto text = meta.ReadFile(rel, kMaxSidecarBytes);
  if (!text.ok()) return s;
  s.j = json::parse(*text, nullptr, false);
  if (!s.j.is_object()) {
    s.j = json::object();
    return s;
  }
  s.fresh = s.j.value("size", int64_t{-1}) == int64_t(st.st_size) &&
            s.j.value("mtimeNs", int64_t{-1}) == Nanos(st.st_mtim);
  return s;
}

class FdReader : public ObjectReader {
 public:
  FdReader(int fd, ObjectInfo info) : fd_(fd), info_(std::move(info)) {}
  ~FdReader() override { ::close(fd_); }
  const ObjectInfo& info() const override { return info_; }
  StatusOr<size_t> ReadAt(uint64_t offset, char* buf, size_t size) override {
    while (true) {
      ssize_t n = ::pread(fd_, buf, size, static_cast<off_t>(offset));
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return IoError("cannot read object " + info_.name + ": " + ErrnoText());
    }
  }

 private:
  int fd_;
  ObjectInfo info_;
};

// Bytes go to a temp file in the store's tmp dir, buffered into large writes that a BlockWriter
// hashes and writes on its own thread while the next block arrives.
class FsWriter : public ObjectWriter {
 public:
  // `tmp`: the temp file's name in the store's tmp dir, open as `fd`.
  FsWriter(FsObjectStore* store, std::string bucket, std::string name, std::string tmp, int fd)
      : store_(store),
        bucket_(std::move(bucket)),
        name_(std::move(name)),
        tmp_(std::move(tmp)),
        fd_(fd),
        blocks_(std::make_unique<BlockWriter>(fd, bucket_ + "/" + name_)) {
    buffer_.reserve(kObjectIoBlock);
  }
  ~FsWriter() override {
    blocks_.reset();  // its thread must be gone before the fd is closed (and its number reused)
    if (fd_ >= 0) {
      ::close(fd_);
      (void)store_->tmp_dir().Unlink(tmp_);
    }
  }
  Status Append(std::string_view data) override {
    if (fd_ < 0) return FailedPreconditionError("writer already committed");
    written_ += data.size();
    buffer_.append(data);
    return buffer_.size() < kObjectIoBlock ? Status::Ok() : Flush();
  }
  uint64_t bytes_written() const override { return written_; }
  StatusOr<ObjectInfo> Commit(const WriteMetadata& meta, const Preconditions& pre,
                              const std::string& expected_md5,
                              const std::string& expected_crc32c) override {
    if (fd_ < 0) return FailedPreconditionError("writer already committed");
    TY_RETURN_IF_ERROR(Flush());
    std::string md5, crc;
    TY_RETURN_IF_ERROR(blocks_->Finish(&md5, &crc));
    if (!expected_md5.empty() && expected_md5 != md5) {
      return InvalidArgumentError("Provided MD5 hash \"" + expected_md5 +
                                  "\" doesn't match calculated MD5 hash \"" + md5 + "\".");
    }
    if (!expected_crc32c.empty() && expected_crc32c != crc) {
      return InvalidArgumentError("Provided CRC32C \"" + expected_crc32c +
                                  "\" doesn't match calculated CRC32C \"" + crc + "\".");
    }
    auto info =
        store_->CommitFile(store_->tmp_dir(), tmp_, fd_, bucket_, name_, meta, pre, md5, crc);
    blocks_.reset();
    ::close(fd_);
    if (!info.ok()) (void)store_->tmp_dir().Unlink(tmp_);
    fd_ = -1;
    return info;
  }

 private:
  Status Flush() {
    if (buffer_.empty()) return Status::Ok();
    TY_ASSIGN_OR_RETURN(buffer_, blocks_->Submit(std::move(buffer_)));
    buffer_.reserve(kObjectIoBlock);
    return Status::Ok();
  }

  FsObjectStore* store_;
  std::string bucket_, name_;
  std::string tmp_;
  int fd_;
  std::unique_ptr<BlockWriter> blocks_;
  std::string buffer_;
  uint64_t written_ = 0;
};

}  // namespace

FsObjectStore::FsObjectStore(FsObjectStoreOptions options) : options_(options) {}

FsObjectStore::~FsObjectStore() = default;

// A bucket is a directory itself, not a link to one (lstat).
Status FsObjectStore::CheckBucket(const std::string& bucket) const {
  TY_RETURN_IF_ERROR(ValidateBucketName(bucket));
  auto st = root_.Stat(bucket);
  if (!st.ok() || !S_ISDIR(st->st_mode)) {
    return NotFoundError("The specified bucket does not exist: " + bucket);
  }
  return Status::Ok();
}

// A name GCS allows but a file cannot have (a "folder/" placeholder) names no object here:
// NOT_FOUND, as clients probing for folders (gcloud storage cp into "dir/") expect.
Status FsObjectStore::CheckReadableName(const std::string& bucket, const std::string& name) const {
  Status s = ValidateObjectName(name);
  if (!s.ok() && trainyard::ValidateObjectName(name).ok()) {
    return NotFoundError("No such object: " + bucket + "/" + name);
  }
  return s;
}

StatusOr<BucketInfo> FsObjectStore::CreateBucket(const std::string& bucket,
                                                 const std::string& project) {
  TY_RETURN_IF_ERROR(ValidateBucketName(bucket));
  std::lock_guard lock(commit_mu_);
  const auto exists = [&] {
    return AlreadyExistsError(
        "Your previous request to create the named bucket succeeded and you already own it: " +
        bucket);
  };
  if (root_.Stat(bucket).ok()) return exists();
  // The owner first, durably: a bucket never exists without the owner it was created with.
  const std::string owner = OwnerName(bucket);
  if (project.empty()) {
    (void)meta_.Unlink(owner);
  } else if (Status s =
                 meta_.ReplaceFile(owner, json{{"project", project}}.dump(), options_.fsync, 0600);
             !s.ok()) {
    return IoError("cannot record the owner of bucket " + bucket + ": " + s.message());
  }
  // The umask decides (002 when the server shares buckets with replica users' group).
  if (::mkdirat(root_.fd(), bucket.c_str(), 0777) != 0) {
    const int err = errno;
    (void)meta_.Unlink(owner);
    if (err == EEXIST) return exists();
    errno = err;
    return IoError("cannot create the directory of bucket " + bucket + ": " + ErrnoText());
  }
  return GetBucket(bucket);
}

StatusOr<BucketInfo> FsObjectStore::GetBucket(const std::string& bucket) {
  TY_RETURN_IF_ERROR(ValidateBucketName(bucket));
  auto st = root_.Stat(bucket);
  if (!st.ok() || !S_ISDIR(st->st_mode)) {
    return NotFoundError("The specified bucket does not exist: " + bucket);
  }
  BucketInfo info{bucket, FromTimespec(st->st_ctim), ""};
  if (auto text = meta_.ReadFile(OwnerName(bucket), kMaxSidecarBytes); text.ok()) {
    const json j = json::parse(*text, nullptr, false);
    if (j.is_object() && j.contains("project") && j["project"].is_string()) {
      info.project = j["project"];
    }
  }
  return info;
}

StatusOr<std::vector<BucketInfo>> FsObjectStore::ListBuckets() {
  std::vector<BucketInfo> out;
  auto entries = root_.List();
  if (!entries.ok()) return IoError("cannot list the bucket root: " + entries.status().message());
  for (const BeneathDir::Entry& entry : *entries) {
    if (entry.type != S_IFDIR || !ValidateBucketName(entry.name).ok()) continue;
    auto info = GetBucket(entry.name);
    if (info.ok()) out.push_back(*info);
  }
  std::sort(out.begin(), out.end(),
            [](const BucketInfo& a, const BucketInfo& b) { return a.name < b.name; });
  return out;
}

Status FsObjectStore::DeleteBucket(const std::string& bucket) {
  TY_RETURN_IF_ERROR(CheckBucket(bucket));
  ListOptions one;
  one.max_results = 1;
  TY_ASSIGN_OR_RETURN(ListResult contents, ListObjects(bucket, one));
  if (!contents.objects.empty()) {
    return FailedPreconditionError("The bucket you tried to delete is not empty: " + bucket);
  }
  // Only empty directories are left, and what is not an object (links, FIFOs): never followed.
  if (Status s = root_.RemoveAll(bucket); !s.ok()) {
    return IoError("cannot remove bucket " + bucket + ": " + s.message());
  }
  (void)meta_.RemoveAll(bucket);
  (void)meta_.Unlink(OwnerName(bucket));
  return Status::Ok();
}

StatusOr<ObjectInfo> FsObjectStore::Describe(const std::string& bucket, const std::string& name,
                                             int fd, bool want_hashes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return IoError("cannot stat object " + name + ": " + ErrnoText());
  ObjectInfo info;
  info.bucket = bucket;
  info.name = name;
  info.size = static_cast<uint64_t>(st.st_size);
  info.generation = Nanos(st.st_mtim) / 1000;
  info.updated = FromTimespec(st.st_mtim);
  info.created = info.updated;
  info.content_type = "application/octet-stream";
  const std::string meta_name = MetaName(bucket, name);
  Sidecar sidecar = ReadSidecar(meta_, meta_name, st);
  if (sidecar.fresh) {
    const json& j = sidecar.j;
    info.content_type = j.value("contentType", info.content_type);
    info.content_encoding = j.value("contentEncoding", "");
    info.metadata = j.value("metadata", std::map<std::string, std::string>{});
    info.md5_base64 = j.value("md5Hash", "");
    info.crc32c_base64 = j.value("crc32c", "");
    info.component_count = j.value("componentCount", 0);
    if (j.contains("createdUs")) info.created = FromMicros(j["createdUs"].get<int64_t>());
  }
  if (want_hashes && (info.md5_base64.empty() || info.crc32c_base64.empty())) {
    ObjectHasher hasher;
    std::string buf(kObjectIoBlock, '\0');
    for (uint64_t off = 0; off < info.size;) {
      ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return IoError("cannot read object " + name + " to hash it: " + ErrnoText());
      hasher.Update(buf.data(), static_cast<size_t>(n));
      off += static_cast<uint64_t>(n);
    }
    hasher.Finish(&info.md5_base64, &info.crc32c_base64);
    json j = sidecar.fresh ? sidecar.j : json::object();
    j["size"] = int64_t(st.st_size);
    j["mtimeNs"] = Nanos(st.st_mtim);
    j["md5Hash"] = info.md5_base64;
    j["crc32c"] = info.crc32c_base64;
    // A cache: losing it only costs a re-hash, so no fsync.
    (void)WriteSidecar(meta_name, j.dump(), /*durable=*/false);
  }
  return info;
}

StatusOr<ObjectInfo> FsObjectStore::GetObject(const std::string& bucket, const std::string& name) {
  TY_ASSIGN_OR_RETURN(auto reader, OpenObject(bucket, name));
  return reader->info();
}

StatusOr<std::unique_ptr<ObjectReader>> FsObjectStore::OpenObject(const std::string& bucket,
                                                                  const std::string& name) {
  TY_RETURN_IF_ERROR(CheckBucket(bucket));
  TY_RETURN_IF_ERROR(CheckReadableName(bucket, name));
  // A link (or a FIFO, a device, a directory) is not an object: NOT_FOUND, never followed.
  auto opened = root_.OpenRegular(DataName(bucket, name));
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kNotFound ||
        opened.status().code() == StatusCode::kFailedPrecondition) {
      return NotFoundError("No such object: " + bucket + "/" + name);
    }
    return IoError("cannot open object " + bucket + "/" + name + ": " + opened.status().message());
  }
  const int fd = opened->release();
  auto info = Describe(bucket, name, fd, /*want_hashes=*/true);
  if (!info.ok()) {
    ::close(fd);
    return info.status();
  }
  // Downloads read front to back: a larger readahead window keeps a cold object's disk reads
  // ahead of the socket.
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<ObjectReader>(new FdReader(fd, std::move(info).value()));
}

StatusOr<std::unique_ptr<ObjectWriter>> FsObjectStore::NewWriter(const std::string& bucket,
                                                                 const std::string& name) {
  TY_RETURN_IF_ERROR(CheckBucket(bucket));
  TY_RETURN_IF_ERROR(ValidateObjectName(name));
  TY_ASSIGN_OR_RETURN(std::string tmp, TempFileName());
  auto fd = tmp_.OpenFile(tmp, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (!fd.ok()) return IoError("cannot create a temp file for an upload: " + fd.status().message());
  return std::unique_ptr<ObjectWriter>(new FsWriter(this, bucket, name, tmp, fd->release()));
}

Status FsObjectStore::CheckPreconditions(const std::string& bucket, const std::string& name,
                                         const Preconditions& pre) {
  if (!pre.if_generation_match && !pre.if_generation_not_match) return Status::Ok();
  int64_t current = 0;  // 0 = no live object, as GCS's ifGenerationMatch=0
  auto st = root_.Stat(DataName(bucket, name));
  if (st.ok() && S_ISREG(st->st_mode)) current = Nanos(st->st_mtim) / 1000;
  if (pre.if_generation_match && *pre.if_generation_match != current) {
    return Status(StatusCode::kAborted,
                  "At least one of the pre-conditions you specified did not hold: "
                  "ifGenerationMatch=" +
                      std::to_string(*pre.if_generation_match) + ", current generation " +
                      std::to_string(current));
  }
  if (pre.if_generation_not_match && *pre.if_generation_not_match == current) {
    return Status(StatusCode::kAborted,
                  "At least one of the pre-conditions you specified did not hold: "
                  "ifGenerationNotMatch=" +
                      std::to_string(current));
  }
  return Status::Ok();
}

StatusOr<ObjectInfo> FsObjectStore::CommitFile(const BeneathDir& from_dir, const std::string& from,
                                               int fd, const std::string& bucket,
                                               const std::string& name, const WriteMetadata& meta,
                                               const Preconditions& pre, const std::string& md5,
                                               const std::string& crc32c) {
  if (options_.fsync && ::fsync(fd) != 0) {
    return IoError("cannot fsync the upload of " + bucket + "/" + name + ": " + ErrnoText());
  }
  const std::string rel = DataName(bucket, name);
  std::lock_guard lock(commit_mu_);
  TY_RETURN_IF_ERROR(CheckPreconditions(bucket, name, pre));
  const size_t slash = rel.rfind('/');
  // The umask decides the folders' modes, as for buckets.
  if (Status s = root_.MakeDirs(rel.substr(0, slash), 0777).status(); !s.ok()) {
    if (s.code() != StatusCode::kFailedPrecondition) return s;
    return FailedPreconditionError(
        "cannot store " + bucket + "/" + name + ": a part of its path is already an object or " +
        "a link (the bucket root is a directory tree, so 'a' and 'a/b' cannot both exist, and " +
        "links in buckets are never followed)");
  }
  auto existing = root_.Stat(rel);
  if (existing.ok() && S_ISDIR(existing->st_mode)) {
    return FailedPreconditionError("cannot store " + bucket + "/" + name + ": other objects are " +
                                   "named '" + name + "/...' (the bucket root is a directory " +
                                   "tree, so 'a' and 'a/b' cannot both exist)");
  }
  ::fchmod(fd, 0644);  // temp files are 0600; objects are readable like files cp makes
  // The generation is the mtime in microseconds, and file times tick coarsely (a jiffy, up to
  // 4 ms): two writes in one tick would share a generation, and an ifGenerationMatch on the older
  // one would pass. The new object's mtime is moved past the one it replaces.
  if (existing.ok() && S_ISREG(existing->st_mode)) {
    struct stat mine {};
    const int64_t replaced_us = Nanos(existing->st_mtim) / 1000;
    if (::fstat(fd, &mine) == 0 && Nanos(mine.st_mtim) / 1000 <= replaced_us) {
      const int64_t next_ns = (replaced_us + 1) * 1000;
      const timespec times[2] = {{0, UTIME_OMIT}, {next_ns / 1000000000, next_ns % 1000000000}};
      ::futimens(fd, times);
    }
  }
  // renameat replaces a link at `rel` itself: nothing outside the bucket is written.
  if (Status s = from_dir.Rename(from, root_, rel); !s.ok()) {
    return IoError("cannot move the upload into place as " + bucket + "/" + name + ": " +
                   s.message());
  }
  struct stat st {};
  ::fstat(fd, &st);
  json j = {
      {"size", int64_t(st.st_size)},
      {"mtimeNs", Nanos(st.st_mtim)},
      {"md5Hash", md5},
      {"crc32c", crc32c},
      {"contentType", meta.content_type.empty() ? "application/octet-stream" : meta.content_type},
      {"createdUs", Micros(FromTimespec(st.st_mtim))}};
  if (!meta.content_encoding.empty()) j["contentEncoding"] = meta.content_encoding;
  if (!meta.metadata.empty()) j["metadata"] = meta.metadata;
  if (meta.component_count > 0) j["componentCount"] = meta.component_count;
  (void)WriteSidecar(MetaName(bucket, name), j.dump(), /*durable=*/false);
  return Describe(bucket, name, fd, /*want_hashes=*/false);
}

Status FsObjectStore::WriteSidecar(const std::string& rel, const std::string& text, bool durable) {
  const size_t slash = rel.rfind('/');
  TY_RETURN_IF_ERROR(meta_.MakeDirs(rel.substr(0, slash), 0700).status());
  return meta_.ReplaceFile(rel, text, durable, 0600);
}

void FsObjectStore::RemoveEmptyParents(const BeneathDir& dir, std::string rel) {
  for (size_t slash = rel.rfind('/'); slash != std::string::npos && rel.find('/') < slash;
       slash = rel.rfind('/')) {
    rel.resize(slash);
    if (!dir.RemoveDir(rel).ok()) return;  // not empty (or gone): stop
  }
}

Status FsObjectStore::DeleteObject(const std::string& bucket, const std::string& name,
                                   const Preconditions& pre) {
  TY_RETURN_IF_ERROR(CheckBucket(bucket));
  TY_RETURN_IF_ERROR(CheckReadableName(bucket, name));
  std::lock_guard lock(commit_mu_);
  const std::string rel = DataName(bucket, name);
  auto st = root_.Stat(rel);  // lstat: a link is not an object, and is left alone
  if (!st.ok() || !S_ISREG(st->st_mode)) {
    return NotFoundError("No such object: " + bucket + "/" + name);
  }
  TY_RETURN_IF_ERROR(CheckPreconditions(bucket, name, pre));
  if (Status s = root_.Unlink(rel); !s.ok()) {
    return IoError("cannot delete " + bucket + "/" + name + ": " + s.message());
  }
  (void)meta_.Unlink(MetaName(bucket, name));
  // GCS has no directories: a "folder" disappears with its last object.
  RemoveEmptyParents(root_, rel);
  RemoveEmptyParents(meta_, MetaName(bucket, name));
  return Status::Ok();
}

StatusOr<ObjectInfo> FsObjectStore::UpdateMetadata(
    const std::string& bucket, const std::string& name,
    const std::optional<std::string>& content_type,
    const std::map<std::string, std::optional<std::string>>& metadata) {
  TY_ASSIGN_OR_RETURN(auto reader, OpenObject(bucket, name));  // hashes the file if needed
  std::lock_guard lock(commit_mu_);
  const std::string meta_name = MetaName(bucket, name);
  TY_ASSIGN_OR_RETURN(std::string text, meta_.ReadFile(meta_name, kMaxSidecarBytes));
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return DataLossError("corrupt metadata of object " + bucket + "/" + name);
  if (content_type) j["contentType"] = *content_type;
  for (const auto& [key, value] : metadata) {
    if (value) {
      j["metadata"][key] = *value;
    } else if (j.contains("metadata")) {
      j["metadata"].erase(key);
    }
  }
  TY_RETURN_IF_ERROR(WriteSidecar(meta_name, j.dump(), /*durable=*/false));
  return GetObject(bucket, name);
}

}  // namespace trainyard::storage
