// `trainyard storage`'s work, through the server's Cloud Storage JSON API, as `gcloud storage`
// does it: the CLI never touches the bucket root itself, so it writes into the server's buckets
// (whatever TRAINYARD_BUCKET_ROOT this shell has), with the server's checks (names, links, the
// caller's token), and a missing bucket is an error, never a new bucket.
//
// URIs are gs://BUCKET[/OBJECT]; anything else is a local path.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "api_client.h"
#include "common/status.h"

namespace trainyard::cli {

struct CopyRequest {
  std::vector<std::string> sources;
  std::string destination;
  bool recursive = false;  // -r: directories and gs:// prefixes, copied with what they hold
};

// Copies each source to the destination (local -> gs://, gs:// -> local, gs:// -> gs://,
// local -> local), one "Copying SRC to DST" line per file on `progress`. The destination is a
// folder when it ends with '/', names a bucket, is an existing directory or prefix, or there are
// several sources; a directory or prefix source needs `recursive` (INVALID_ARGUMENT saying so).
// Local files are written to a temp file and renamed; objects are committed whole by the server.
// Errors: NOT_FOUND naming a missing source or bucket (and how to create the bucket), the
// server's errors otherwise.
Status CopyObjects(ApiClient& api, const CopyRequest& request, std::ostream& progress);

// The lines `gcloud storage ls` prints: for no URI the project's buckets ("gs://B/"); for
// gs://B[/PREFIX] the objects and, unless `recursive`, the folders ("gs://B/dir/") one level
// below. NOT_FOUND when the bucket, or a PREFIX that is neither object nor folder, is missing.
StatusOr<std::vector<std::string>> ListUris(ApiClient& api, const std::string& uri, bool recursive,
                                            const std::string& project);

// NOT_FOUND "bucket 'B' does not exist; create it first: ..." when gs://B is not a bucket on the
// server (one GET); OK otherwise.
Status CheckServerBucket(ApiClient& api, const std::string& bucket);

}  // namespace trainyard::cli
