// The files of a batch prediction job's replicas (batch_prediction_controller.h), read and moved
// beneath the bucket root without following links (common/beneath.h): what replicas leave in
// their staging directory is theirs, and a root server never follows a link they plant.
//   <staging>/progress/progress-<shard>.json   {"total", "successful", "failed", "done"}
//   <staging>/output/prediction.results-*      moved to the output directory at the end
//   <staging>/output/prediction.errors_stats-*
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace trainyard::controller {

struct BatchCounts {
  int64_t total = 0;  // instances of the shards that reported (every shard, once all did)
  int64_t successful = 0;
  int64_t failed = 0;
  int shards_reported = 0;
  int shards_done = 0;  // shards whose files are complete ("done": true)
};

// Sums the progress files under `staging_uri` (gs://...). A missing directory counts nothing; an
// unreadable or malformed file is skipped (a replica rewrites it).
BatchCounts ReadBatchProgress(const std::string& staging_uri);

// Moves every shard file of <staging_uri>/output into `output_uri` (gs://..., made when missing),
// a file already there is kept (a move a crash interrupted). FAILED_PRECONDITION naming the entry
// for anything but a regular file named prediction.results-* or prediction.errors_stats-*.
Status MoveBatchShards(const std::string& staging_uri, const std::string& output_uri);

}  // namespace trainyard::controller
