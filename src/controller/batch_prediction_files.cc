#include "controller/batch_prediction_files.h"

#include <sys/stat.h>

#include "common/beneath.h"
#include "common/bucket_path.h"
#include "common/json_parse.h"
#include "spec/batch_prediction_job.h"

namespace trainyard::controller {
namespace {

// "bucket/object" of a gs:// URI, for BeneathDir.
StatusOr<std::string> RelOf(const std::string& uri) {
  TY_ASSIGN_OR_RETURN(GcsUri gcs, ParseGcsUri(uri));
  std::string rel = gcs.bucket;
  std::string object = gcs.object;
  while (object.ends_with('/')) object.pop_back();
  if (!object.empty()) rel += "/" + object;
  return rel;
}

bool IsShardName(const std::string& name) {
  return name.starts_with(spec::kResultsFilePrefix) || name.starts_with(spec::kErrorsFilePrefix);
}

}  // namespace

BatchCounts ReadBatchProgress(const std::string& staging_uri) {
  BatchCounts c;
  StatusOr<std::string> rel = RelOf(staging_uri);
  StatusOr<BeneathDir> root = BeneathDir::Open(BucketRoot());
  if (!rel.ok() || !root.ok()) return c;
  StatusOr<std::vector<BeneathDir::Entry>> entries = root->List(*rel + "/progress");
  if (!entries.ok()) return c;
  for (const BeneathDir::Entry& e : *entries) {
    if (e.type != S_IFREG || !e.name.starts_with("progress-")) continue;
    StatusOr<std::string> text = root->ReadFile(*rel + "/progress/" + e.name, 4096);
    if (!text.ok()) continue;
    StatusOr<nlohmann::json> p = ParseJson(*text);
    if (!p.ok() || !p->is_object()) continue;
    auto count = [&](const char* k) {
      const nlohmann::json& v = (*p)[k];
      return v.is_number_integer() && v.get<int64_t>() >= 0 ? v.get<int64_t>() : int64_t{0};
    };
    c.total += count("total");
    c.successful += count("successful");
    c.failed += count("failed");
    ++c.shards_reported;
    if ((*p)["done"] == true) ++c.shards_done;
  }
  return c;
}

Status MoveBatchShards(const std::string& staging_uri, const std::string& output_uri) {
  TY_ASSIGN_OR_RETURN(std::string from_rel, RelOf(staging_uri));
  TY_ASSIGN_OR_RETURN(std::string to_rel, RelOf(output_uri));
  TY_ASSIGN_OR_RETURN(BeneathDir root, BeneathDir::Open(BucketRoot()));
  TY_ASSIGN_OR_RETURN(BeneathDir to, root.MakeDirs(to_rel, 0755));
  StatusOr<BeneathDir> from = root.OpenDir(from_rel + "/output");
  if (from.status().code() == StatusCode::kNotFound) return Status::Ok();
  TY_RETURN_IF_ERROR(from.status());
  TY_ASSIGN_OR_RETURN(std::vector<BeneathDir::Entry> entries, from->List());
  for (const BeneathDir::Entry& e : entries) {
    if (e.name.starts_with(".")) continue;  // a shard a replica was writing when it was stopped
    if (e.type != S_IFREG || !IsShardName(e.name)) {
      return FailedPreconditionError(
          staging_uri + "/output/" + e.name +
          " is not a shard file the batch prediction writes (links and other files are never "
          "moved or followed)");
    }
    if (to.Stat(e.name).ok()) continue;
    TY_RETURN_IF_ERROR(from->Rename(e.name, to, e.name));
  }
  return Status::Ok();
}

}  // namespace trainyard::controller
