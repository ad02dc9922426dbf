// Internal to src/storage: the parsed request the storage route handlers share.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "storage/object_store.h"
#include "storage/storage_routes.h"

namespace trainyard::storage::internal {

struct Call {
  const httplib::Request& req;
  httplib::Response& res;
  const httplib::ContentReader* body;  // nullptr when the request has no body
  ObjectStore* store;
  const StorageRoutesOptions& options;
  std::string base_url;
};

// Reads a JSON body (at most options.max_json_bytes). An absent or empty body is `null`.
StatusOr<nlohmann::json> ReadJsonBody(const Call& call);

// Upload endpoints (storage_upload.cc): POST starts or performs an upload; PUT/POST with
// upload_id sends a resumable chunk; DELETE with upload_id cancels.
void HandleUpload(const Call& call, const std::string& bucket);
// Media download of an object with Range support (storage_download.cc).
void HandleDownload(const Call& call, const std::string& bucket, const std::string& name);

}  // namespace trainyard::storage::internal
