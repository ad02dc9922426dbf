// ObjectStore: the buckets and objects behind the Cloud Storage JSON API subset (storage_routes.h).
//
// A bucket is a name; an object is a name in a bucket with bytes and metadata (size, MD5,
// CRC32C, generation, times, content type, user metadata). FsObjectStore keeps them as plain
// files under the bucket root (common/bucket_path.h), so gs:// paths read by jobs and objects
// written through the API are the same files.
//
// Contracts every implementation keeps:
//  - Names are validated first (ValidateBucketName, ValidateObjectName): INVALID_ARGUMENT naming
//    the rule, before anything touches storage; no name reaches outside its bucket.
//  - Writes are all-or-nothing: an ObjectWriter's bytes become visible only in Commit, at once
//    (readers see the old object or the new one); a writer destroyed without Commit leaves no
//    trace.
//  - Object bytes stream: nothing reads or writes a whole object in memory.
//  - Errors: NOT_FOUND (bucket or object missing), ALREADY_EXISTS (bucket exists),
//    FAILED_PRECONDITION (bucket not empty, a name conflicting with a directory),
//    ABORTED (an if*Match precondition failed), UNAVAILABLE (I/O).
// Thread-safety: every method may be called concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::storage {

using TimePoint = std::chrono::system_clock::time_point;

struct BucketInfo {
  std::string name;
  TimePoint created;
  std::string project;  // the owner: the project that created it; "" for a bucket made by hand
};

struct ObjectInfo {
  std::string bucket;
  std::string name;
  uint64_t size = 0;
  int64_t generation = 0;  // changes on every write (the data file's mtime in microseconds)
  TimePoint created;
  TimePoint updated;
  std::string content_type;  // "application/octet-stream" when the writer gave none
  std::string content_encoding;
  std::map<std::string, std::string> metadata;  // user metadata
  std::string md5_base64;                       // may be empty only in List results
  std::string crc32c_base64;
  int component_count = 0;  // > 0 for objects made by Compose
};

// Conditions on the object's current generation (0 = "must not exist"), as GCS's
// ifGenerationMatch / ifGenerationNotMatch query parameters.
struct Preconditions {
  std::optional<int64_t> if_generation_match;
  std::optional<int64_t> if_generation_not_match;
};

// Metadata given by the writer; the store computes size, hashes, generation and times.
struct WriteMetadata {
  std::string content_type;
  std::string content_encoding;
  std::map<std::string, std::string> metadata;
  int component_count = 0;
};

struct ListOptions {
  std::string prefix;
  std::string delimiter;     // "" = flat listing; otherwise names are rolled up into prefixes
  std::string start_after;   // exclusive (the page token's position)
  std::string start_offset;  // inclusive lower bound (startOffset)
  std::string end_offset;    // exclusive upper bound (endOffset); "" = none
  bool include_trailing_delimiter = false;
  int max_results = 1000;
};

struct ListResult {
  std::vector<ObjectInfo> objects;    // hashes filled only when already known
  std::vector<std::string> prefixes;  // with delimiter
  std::string next_start_after;       // "" = last page
};

// A readable object: its metadata and a handle to read its bytes.
class ObjectReader {
 public:
  virtual ~ObjectReader() = default;
  virtual const ObjectInfo& info() const = 0;
  // Reads up to `size` bytes at `offset`; returns the count (0 at the end). UNAVAILABLE on I/O.
  virtual StatusOr<size_t> ReadAt(uint64_t offset, char* buf, size_t size) = 0;
};

// A pending object write (see the all-or-nothing contract above). Not thread-safe.
class ObjectWriter {
 public:
  virtual ~ObjectWriter() = default;
  virtual Status Append(std::string_view data) = 0;
  virtual uint64_t bytes_written() const = 0;
  // Makes the bytes the object's content if `pre` holds. The writer is spent afterwards.
  // `expected_md5_base64`/`expected_crc32c_base64` (when not empty) must match what was written:
  // INVALID_ARGUMENT otherwise (and nothing is committed).
  virtual StatusOr<ObjectInfo> Commit(const WriteMetadata& meta, const Preconditions& pre,
                                      const std::string& expected_md5_base64 = "",
                                      const std::string& expected_crc32c_base64 = "") = 0;
};

// A resumable upload session: bytes are appended in order across requests (and server restarts)
// until the upload is finalized into an object.
struct UploadSession {
  std::string id;
  std::string bucket;
  std::string name;
  WriteMetadata meta;
  Preconditions pre;
  std::optional<uint64_t> total_size;  // when the client declared it
  uint64_t persisted = 0;              // bytes received and durable in the session so far
  bool finished = false;  // FinishUpload committed it (the object may have changed since)
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Records `project` (may be empty) as the bucket's owner. Buckets come only from here (or an
  // operator's mkdir): no write makes one (NOT_FOUND for an object in a missing bucket).
  virtual StatusOr<BucketInfo> CreateBucket(const std::string& bucket,
                                            const std::string& project) = 0;
  virtual StatusOr<BucketInfo> GetBucket(const std::string& bucket) = 0;
  virtual StatusOr<std::vector<BucketInfo>> ListBuckets() = 0;
  // FAILED_PRECONDITION when the bucket still holds objects.
  virtual Status DeleteBucket(const std::string& bucket) = 0;

  // Metadata with hashes (computed and cached when the bytes were written outside the API).
  virtual StatusOr<ObjectInfo> GetObject(const std::string& bucket, const std::string& name) = 0;
  virtual StatusOr<ListResult> ListObjects(const std::string& bucket,
                                           const ListOptions& options) = 0;
  virtual StatusOr<std::unique_ptr<ObjectReader>> OpenObject(const std::string& bucket,
                                                             const std::string& name) = 0;
  virtual StatusOr<std::unique_ptr<ObjectWriter>> NewWriter(const std::string& bucket,
                                                            const std::string& name) = 0;
  virtual Status DeleteObject(const std::string& bucket, const std::string& name,
                              const Preconditions& pre) = 0;
  // Replaces content type, encoding and user metadata (a null metadata value removes a key,
  // as in a JSON PATCH); returns the updated object.
  virtual StatusOr<ObjectInfo> UpdateMetadata(
      const std::string& bucket, const std::string& name,
      const std::optional<std::string>& content_type,
      const std::map<std::string, std::optional<std::string>>& metadata) = 0;

  // Resumable uploads. StartUpload validates the names and bucket; the session is durable.
  virtual StatusOr<UploadSession> StartUpload(UploadSession session) = 0;
  virtual StatusOr<UploadSession> GetUpload(const std::string& id) = 0;
  // Appends `chunk` bytes starting at `offset` (bytes before `persisted` are skipped, as a client
  // resending an unacknowledged range does). OUT_OF_RANGE if `offset` is past what is persisted.
  // Reading the chunk happens through `read`, which calls the given sink per piece; if `read`
  // fails the session is rolled back to what it held before the call.
  using ChunkSink = std::function<bool(const char*, size_t)>;
  virtual StatusOr<UploadSession> AppendUpload(const std::string& id, uint64_t offset,
                                               const std::function<bool(ChunkSink)>& read) = 0;
  // Commits the session's bytes as the object and removes the session.
  virtual StatusOr<ObjectInfo> FinishUpload(const std::string& id) = 0;
  virtual Status CancelUpload(const std::string& id) = 0;
};

// trainyard::ValidateBucketName (common/bucket_path.h: Cloud Storage's bucket naming rules).
Status ValidateBucketName(std::string_view bucket);
// trainyard::ValidateObjectName (Cloud Storage's rules, no "."/".."/empty segment) plus what a
// file needs: no trailing '/' (a folder placeholder cannot also be a directory), no segment
// longer than 255 bytes (NAME_MAX).
Status ValidateObjectName(std::string_view name);

}  // namespace trainyard::storage
