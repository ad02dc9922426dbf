// FsObjectStore: ObjectStore over a directory tree, the bucket root (common/bucket_path.h).
//
// Layout under `root`:
//   BUCKET/NAME                      the object's bytes (what gs://BUCKET/NAME resolves to)
//   .trainyard-meta/BUCKET/NAME.json  sidecar: content type, user metadata, MD5, CRC32C, and the
//                                    size and mtime they were computed for
//   .trainyard-meta/BUCKET.Owner.json  the bucket's owner project (bucket names have no capitals,
//                                    so this never clashes with a bucket's sidecar directory)
//   .trainyard-tmp/                  bytes of writers not yet committed
//   .trainyard-uploads/ID.json, ID.part   resumable upload sessions
// None of the dot-directories is a valid bucket name, so they never clash with buckets. They are
// the server's alone (mode 0700; one another user made is removed and made anew at Open) and are
// held open, so renaming them or planting a link in their place reaches nothing.
//
// Replicas write into buckets as other users (docs/security.md), so every name is resolved
// beneath the bucket root's open fd without following links (common/beneath.h): a link in a
// bucket is never an object (reads and deletes answer NOT_FOUND, listings leave it out), a
// write through a linked directory is FAILED_PRECONDITION, and only regular files are served (a
// FIFO cannot block a server thread). No error names the bucket root's local path.
//
// A sidecar is trusted only while the data file's size and mtime match it: a file written by a
// job or `cp` (not through the API) gets its hashes computed on first GetObject/OpenObject and
// cached. A commit writes the bytes to a temp file, fsyncs it (when `fsync` is set) and renames
// it over the object, so a crash leaves the old object or the new one; the sidecar follows.
// Objects "a" and "a/b" cannot both exist (a file cannot also be a directory): the second write
// fails with FAILED_PRECONDITION naming the clash.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <mutex>

#include "common/beneath.h"
#include "storage/object_hash.h"
#include "storage/object_store.h"

namespace trainyard::storage {

struct FsObjectStoreOptions {
  bool fsync = true;  // fsync object bytes before they replace the old object
  // Upload sessions untouched for this long are removed when the store opens (GCS: one week).
  std::chrono::hours session_lifetime{24 * 7};
};

class FsObjectStore : public ObjectStore {
 public:
  // Creates the dot-directories under `root` if missing and drops expired upload sessions.
  static StatusOr<std::unique_ptr<FsObjectStore>> Open(const std::filesystem::path& root,
                                                       FsObjectStoreOptions options = {});

  ~FsObjectStore() override;

  StatusOr<BucketInfo> CreateBucket(const std::string& bucket, const std::string& project) override;
  StatusOr<BucketInfo> GetBucket(const std::string& bucket) override;
  StatusOr<std::vector<BucketInfo>> ListBuckets() override;
  Status DeleteBucket(const std::string& bucket) override;

  StatusOr<ObjectInfo> GetObject(const std::string& bucket, const std::string& name) override;
  StatusOr<ListResult> ListObjects(const std::string& bucket, const ListOptions& options) override;
  StatusOr<std::unique_ptr<ObjectReader>> OpenObject(const std::string& bucket,
                                                     const std::string& name) override;
  StatusOr<std::unique_ptr<ObjectWriter>> NewWriter(const std::string& bucket,
                                                    const std::string& name) override;
  Status DeleteObject(const std::string& bucket, const std::string& name,
                      const Preconditions& pre) override;
  StatusOr<ObjectInfo> UpdateMetadata(
      const std::string& bucket, const std::string& name,
      const std::optional<std::string>& content_type,
      const std::map<std::string, std::optional<std::string>>& metadata) override;

  StatusOr<UploadSession> StartUpload(UploadSession session) override;
  StatusOr<UploadSession> GetUpload(const std::string& id) override;
  StatusOr<UploadSession> AppendUpload(const std::string& id, uint64_t offset,
                                       const std::function<bool(ChunkSink)>& read) override;
  StatusOr<ObjectInfo> FinishUpload(const std::string& id) override;
  Status CancelUpload(const std::string& id) override;

  // Internal to fs_object_store*.cc (used by the writer): moves the finished file `from` beneath
  // `from_dir` (open as `fd`) into place as BUCKET/NAME under the commit lock.
  StatusOr<ObjectInfo> CommitFile(const BeneathDir& from_dir, const std::string& from, int fd,
                                  const std::string& bucket, const std::string& name,
                                  const WriteMetadata& meta, const Preconditions& pre,
                                  const std::string& md5, const std::string& crc32c);
  const BeneathDir& tmp_dir() const { return tmp_; }

 private:
  explicit FsObjectStore(FsObjectStoreOptions options);
  Status OpenDirs(const std::filesystem::path& root);
  static std::string DataName(const std::string& bucket, const std::string& name) {
    return bucket + "/" + name;
  }
  static std::string OwnerName(const std::string& bucket) { return bucket + ".Owner.json"; }
  static std::string MetaName(const std::string& bucket, const std::string& name) {
    return bucket + "/" + name + ".json";
  }
  Status CheckBucket(const std::string& bucket) const;
  Status CheckReadableName(const std::string& bucket, const std::string& name) const;
  // Metadata of the open data file `fd`; hashes are computed (reading `fd`) and cached when
  // `want_hashes` and the sidecar is stale.
  StatusOr<ObjectInfo> Describe(const std::string& bucket, const std::string& name, int fd,
                                bool want_hashes);
  Status CheckPreconditions(const std::string& bucket, const std::string& name,
                            const Preconditions& pre);
  // Writes the sidecar `rel` beneath .trainyard-meta, making its directories.
  Status WriteSidecar(const std::string& rel, const std::string& text, bool durable);
  // A fresh random name for a file in .trainyard-tmp.
  static StatusOr<std::string> TempFileName();
  // Removes the directories of `rel` beneath `dir` that are empty, deepest first, down to (not
  // including) its first component.
  static void RemoveEmptyParents(const BeneathDir& dir, std::string rel);
  static std::string SessionName(const std::string& id, const char* ext) { return id + ext; }
  Status SaveSession(const UploadSession& session);
  std::mutex& SessionMutex(const std::string& id);

  BeneathDir root_;     // the bucket root
  BeneathDir meta_;     // .trainyard-meta
  BeneathDir tmp_;      // .trainyard-tmp
  BeneathDir uploads_;  // .trainyard-uploads
  FsObjectStoreOptions options_;
  std::mutex commit_mu_;  // precondition check + rename + sidecar, per store
  std::mutex sessions_mu_;
  std::array<std::mutex, 64> session_mu_;  // striped by session id: one request per session
  // The hashes of a session's part file, valid while they cover exactly `hasher.bytes()` bytes
  // of it (a failed chunk or a restart makes FinishUpload hash the file again).
  struct LiveHash {
    ObjectHasher hasher;
  };
  std::map<std::string, std::unique_ptr<LiveHash>> live_hashes_;  // guarded by sessions_mu_
};

}  // namespace trainyard::storage
