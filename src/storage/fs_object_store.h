// FsObjectStore: ObjectStore over a directory tree, the bucket root (common/bucket_path.h).
//
// Layout under `root`:
//   BUCKET/NAME                      the object's bytes (what gs://BUCKET/NAME resolves to)
//   .trainyard-meta/BUCKET/NAME.json  sidecar: content type, user metadata, MD5, CRC32C, and the
//                                    size and mtime they were computed for
//   .trainyard-tmp/                  bytes of writers not yet committed
//   .trainyard-uploads/ID.json, ID.part   resumable upload sessions
// None of the dot-directories is a valid bucket name, so they never clash with buckets.
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

  StatusOr<BucketInfo> CreateBucket(const std::string& bucket) override;
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

  // Internal to fs_object_store*.cc (used by the writer): moves the finished temp file `tmp`
  // (open as `fd`) into place as BUCKET/NAME under the commit lock.
  StatusOr<ObjectInfo> CommitFile(const std::filesystem::path& tmp, int fd,
                                  const std::string& bucket, const std::string& name,
                                  const WriteMetadata& meta, const Preconditions& pre,
                                  const std::string& md5, const std::string& crc32c);
  const std::filesystem::path& tmp_dir() const { return tmp_dir_; }

 private:
  FsObjectStore(std::filesystem::path root, FsObjectStoreOptions options);
  std::filesystem::path BucketDir(const std::string& bucket) const { return root_ / bucket; }
  std::filesystem::path DataPath(const std::string& bucket, const std::string& name) const;
  std::filesystem::path MetaPath(const std::string& bucket, const std::string& name) const;
  Status CheckBucket(const std::string& bucket) const;
  Status CheckReadableName(const std::string& bucket, const std::string& name) const;
  // Metadata of the open data file `fd`; hashes are computed (reading `fd`) and cached when
  // `want_hashes` and the sidecar is stale.
  StatusOr<ObjectInfo> Describe(const std::string& bucket, const std::string& name, int fd,
                                bool want_hashes);
  Status CheckPreconditions(const std::string& bucket, const std::string& name,
                            const Preconditions& pre);
  void RemoveEmptyParents(std::filesystem::path dir, const std::filesystem::path& stop);
  std::filesystem::path SessionPath(const std::string& id, const char* ext) const;
  Status SaveSession(const UploadSession& session);
  std::mutex& SessionMutex(const std::string& id);

  std::filesystem::path root_;
  std::filesystem::path meta_dir_;
  std::filesystem::path tmp_dir_;
  std::filesystem::path uploads_dir_;
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
