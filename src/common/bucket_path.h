// gs:// URIs on a self-hosted machine.
//
// Users keep writing `gs://bucket/path` in job specs, flags and scripts (as on Vertex); Trainyard
// maps them to a local directory tree, the "bucket root". The trainer, the CLI's `storage cp` and
// the platform all use this one mapping:
//
//   gs://BUCKET/OBJECT  ->  $TRAINYARD_BUCKET_ROOT/BUCKET/OBJECT
//
// TRAINYARD_BUCKET_ROOT defaults to $HOME/.trainyard/buckets (or /tmp/trainyard-buckets when HOME
// is unset).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard {

// The bucket root from the environment (see above).
std::filesystem::path BucketRoot();

bool IsGcsUri(std::string_view s);

// Maps a gs:// URI to its local path under BucketRoot(); any other string is returned unchanged as
// a local path. INVALID_ARGUMENT for "gs://" without a bucket, or an object path with ".."
// segments (they would escape the bucket root).
StatusOr<std::filesystem::path> ResolveStoragePath(std::string_view uri_or_path);

}  // namespace trainyard
