// gs:// URIs on a self-hosted machine.
//
// Users keep writing `gs://bucket/path` in job specs, flags and scripts (as on Vertex); Trainyard
// maps them to a local directory tree, the "bucket root". The trainer, the CLI's `storage cp` and
// the platform all use this one mapping:
//
//   gs://BUCKET/OBJECT  ->  $TRAINYARD_BUCKET_ROOT/BUCKET/OBJECT
//
// TRAINYARD_BUCKET_ROOT defaults to /var/lib/trainyard/buckets for root (whose private home a
// root server's unprivileged replicas cannot reach), else $HOME/.trainyard/buckets (or
// /tmp/trainyard-buckets when HOME is unset).
//
// Names are checked here, once, for every caller: a bucket name by Cloud Storage's naming rules,
// an object name by Cloud Storage's rules plus what a file system needs so that the mapped path
// stays under BUCKET_ROOT/BUCKET (no "." or ".." segment, no leading or doubled '/', no NUL).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard {

// The bucket root from the environment (see above).
std::filesystem::path BucketRoot();

bool IsGcsUri(std::string_view s);

// OK when `name` is a valid Cloud Storage bucket name: 3-63 characters (up to 222 when it has
// dots, each dot-separated part 1-63), only a-z 0-9 - _ ., starting and ending with a letter or
// digit, not an IPv4 address, not starting with "goog" nor containing "google".
// INVALID_ARGUMENT naming the broken rule otherwise.
Status ValidateBucketName(std::string_view name);

// OK when `name` is a valid object name here: 1-1024 bytes of UTF-8 without CR, LF or NUL; no
// segment "." or ".."; no leading '/' and no empty segment except one trailing '/' (a "folder").
// INVALID_ARGUMENT naming the broken rule otherwise.
Status ValidateObjectName(std::string_view name);

struct GcsUri {
  std::string bucket;
  std::string object;  // empty for gs://BUCKET and gs://BUCKET/
};

// Splits and validates gs://BUCKET[/OBJECT]. INVALID_ARGUMENT (quoting the URI) when it is not a
// gs:// URI or a name breaks the rules above.
StatusOr<GcsUri> ParseGcsUri(std::string_view uri);

// Maps a gs:// URI to its local path under BucketRoot() (validated by ParseGcsUri); any other
// string is returned unchanged as a local path.
StatusOr<std::filesystem::path> ResolveStoragePath(std::string_view uri_or_path);

// OK when `uri_or_path` is not a gs:// URI or names a bucket that exists (a directory
// BucketRoot()/BUCKET). Buckets are made only by an explicit create (the Storage API's
// buckets.insert: `trainyard storage buckets create`, `gcloud storage buckets create`), never as a
// side effect of a write, so a typo in a bucket name is an error rather than a new bucket.
// NOT_FOUND quoting the URI and naming both create commands otherwise; FAILED_PRECONDITION when
// the bucket's entry is a symbolic link (never followed, as the Storage API); INVALID_ARGUMENT for
// a malformed URI (ParseGcsUri).
Status CheckBucketExists(std::string_view uri_or_path);
// The NOT_FOUND every caller gives for `bucket` missing (`uri` is what the user typed).
Status MissingBucketError(std::string_view bucket, std::string_view uri);

// `text` (an error message) with every local path under BucketRoot() written back as the gs://
// URI it resolves from ("<root>/bkt/data/x.csv" -> "gs://bkt/data/x.csv"), so a user reads the
// URI they typed, not a server path.
std::string WithGcsUris(std::string_view text);

}  // namespace trainyard
