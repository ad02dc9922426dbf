// One replica's share of a batch prediction job: the instances numbered shard, shard + shards,
// ... across the job's input files (instance_reader.h), sent to a Predictor in batches, written
// as Vertex writes them (spec/batch_prediction_job.h): results to
// <output_dir>/prediction.results-<shard>-of-<shards> (always, possibly empty) and failed
// instances to prediction.errors_stats-<shard>-of-<shards> (only when there are some). Each file is
// written under a temporary name and renamed when complete, so a reader sees all of it or nothing;
// a replica started again redoes its shard and replaces them.
//
// A failed instance (unreadable line, or the predictor's per-instance error) is a line of the
// errors file, never the end of the shard; only the job's own errors end it (an input that cannot
// be read, a file error, a predictor that fails as a whole: Predictor::Predict's Status).
// Progress (instances done of the shard's total) is written to `progress_file` (JSON
// {"total", "successful", "failed", "done"}) at most once a second and at the end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/batch_prediction_job.h"

namespace trainyard::batch_prediction {

// A model behind the batch: the native classifier in-process or a serving container over HTTP.
class Predictor {
 public:
  virtual ~Predictor() = default;
  // One result per instance, in order: the prediction, or that instance's error. A Status error
  // ends the job (the model cannot serve at all).
  virtual StatusOr<std::vector<StatusOr<nlohmann::json>>> Predict(
      const std::vector<nlohmann::json>& instances, const nlohmann::json& parameters) = 0;
};

struct ShardOptions {
  std::vector<std::string> inputs;  // gs:// URIs (or local paths), wildcards already expanded
  // Reads one input (resolves gs:// through the bucket root without following links).
  std::function<StatusOr<std::string>(const std::string& uri)> read;
  std::string format;  // "jsonl" or "csv"
  spec::InstanceConfig instance_config;
  nlohmann::json parameters;  // sent with every batch; null = none
  int shard = 0;
  int shards = 1;
  int batch_size = spec::kDefaultBatchSize;
  std::filesystem::path output_dir;
  std::filesystem::path progress_file;  // "" = none
};

struct ShardCounts {
  int64_t total = 0;
  int64_t successful = 0;
  int64_t failed = 0;
};

StatusOr<ShardCounts> RunShard(const ShardOptions& options, Predictor& predictor);

// A `{"code": 3, "message": ...}` for an error line.
nlohmann::json ErrorJson(const Status& status);

}  // namespace trainyard::batch_prediction
