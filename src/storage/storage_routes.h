// The Cloud Storage JSON API subset Trainyard serves over an ObjectStore, so gcloud storage,
// gsutil (use_gcloud_storage), and clients honouring STORAGE_EMULATOR_HOST (the official Node
// and Python storage clients, gcsfs) work against the bucket root. See docs/api.md.
//
//   GET|POST          /storage/v1/b                       buckets list | insert
//   GET|DELETE|PATCH  /storage/v1/b/B                     bucket get | delete | patch (no-op)
//   GET               /storage/v1/b/B/o                   objects list (prefix, delimiter, ...)
//   GET|DELETE|PATCH|PUT /storage/v1/b/B/o/O              get (alt=json|media, Range) | delete |
//                                                         update contentType/metadata
//   POST              /storage/v1/b/B/o/O/compose         compose (up to 32 sources)
//   POST              /storage/v1/b/B/o/O/copyTo/b/B2/o/O2     copy
//   POST              /storage/v1/b/B/o/O/rewriteTo/b/B2/o/O2  rewrite (done in one call)
//   GET               /download/storage/v1/b/B/o/O        media download (Range)
//   POST              /upload/storage/v1/b/B/o            uploadType=media|multipart|resumable
//   PUT|POST|DELETE   /upload/storage/v1/b/B/o?upload_id= resumable chunk | cancel
//
// Bodies stream: uploads go to disk as they arrive, downloads are read from disk as they are
// sent. Routes are registered as content-reader handlers, so the server's payload limit must
// allow object-sized bodies on these paths (ApiServer exempts them; see IsStoragePath).
#pragma once

#include <filesystem>
#include <string_view>

#include "storage/object_store.h"

// Forward declared: this header is included next to Eigen (src/tuning, via controller/), which
// breaks when cpp-httplib's header comes first.
namespace trainyard::api {
class RouteTable;
}

namespace trainyard::storage {

struct StorageRoutesOptions {
  size_t max_json_bytes = 1 << 20;  // JSON bodies (metadata, compose, copy)
  // Where the objects lie (the bucket root): an upload its disk refuses (full, read-only) is
  // 429 RESOURCE_EXHAUSTED quoting this file system's free space (common/disk_fault.h).
  std::filesystem::path root;
};

// `store` must outlive the server. Buckets name no project: GET (reads, downloads) needs
// Access::kRead and every other method (uploads, metadata, compose, copy, delete) Access::kWrite,
// from a token of any project (docs/security.md).
void RegisterStorageRoutes(api::RouteTable& routes, ObjectStore* store,
                           StorageRoutesOptions options = {});

// True for the paths RegisterStorageRoutes serves (their bodies may be objects of any size).
bool IsStoragePath(std::string_view path);

}  // namespace trainyard::storage
