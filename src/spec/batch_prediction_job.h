// BatchPredictionJob: the Vertex AI BatchPredictionJob resource
// (google/cloud/aiplatform/v1/batch_prediction_job.proto) for what Trainyard scores: a registered
// model's instances read from files in buckets, predictions written back to a bucket as Vertex
// writes them (docs/reference/batch-prediction-real-clients.md has what the real clients send).
//
// The job is kept in its proto3-JSON form; the protojson rules and wording (protojson/reader.h):
// unknown fields refused with their path, snake_case accepted, output-only fields accepted and
// dropped (a described job can be sent back as it is).
//
//   BatchPredictionJob {displayName (required), model (required: projects/P/locations/L/models/M
//     with an optional @version or @alias, or a bare model id), inputConfig (required),
//     outputConfig (required), instanceConfig, modelParameters (any JSON), dedicatedResources,
//     manualBatchTuningParameters {batchSize}, labels, serviceAccount (accepted, unused),
//     generateExplanation (false only)}
//   inputConfig {instancesFormat: "jsonl" | "csv", gcsSource {uris: [gs://...]}} ('*' in a URI
//     matches any run of characters, '/' included)
//   outputConfig {predictionsFormat: "jsonl", gcsDestination {outputUriPrefix: gs://...}}
//   instanceConfig {instanceType: "object" | "array", keyField, includedFields, excludedFields}
//   dedicatedResources {machineSpec, startingReplicaCount (1-64), maxReplicaCount}
//   output only: name, state (JOB_STATE_*), error, outputInfo {gcsOutputDirectory},
//     completionStats {successfulCount, failedCount, incompleteCount}, partialFailures,
//     resourcesConsumed {replicaHours}, modelVersionId, createTime, startTime, endTime,
//     updateTime, trainyardInfo {backingCustomJob, estimatedCostUsd}
// bigquerySource/bigqueryDestination, other formats, explanations and encryptionSpec are refused
// with a field error saying what to use instead.
//
// The output directory (Vertex's): <outputUriPrefix>/prediction-<model display name>-<create
// time as YYYY_MM_DDThh_mm_ss_sssZ>/ with prediction.results-0000N-of-0000M files of
// {"instance" | "key": ..., "prediction": ...} lines and, for instances that failed,
// prediction.errors_stats-0000N-of-0000M files of {"instance" | "key": ..., "error": {"code",
// "message"}} lines; one shard per replica.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "spec/custom_job.h"  // MachineSpec

namespace trainyard::spec {

inline constexpr std::string_view kBatchPredictionJobs = "batchPredictionJobs";
inline constexpr int32_t kMaxBatchPredictionReplicas = 64;
inline constexpr int32_t kDefaultBatchSize = 64;  // Vertex's default batch
inline constexpr int32_t kMaxBatchSize = 4096;
// The file names of a job's output (Vertex's Beam-style shards).
inline constexpr std::string_view kResultsFilePrefix = "prediction.results-";
inline constexpr std::string_view kErrorsFilePrefix = "prediction.errors_stats-";

// instanceConfig, as the replica applies it to every instance.
struct InstanceConfig {
  std::string instance_type;  // "", "object" or "array"
  std::string key_field;
  std::vector<std::string> included_fields;
  std::vector<std::string> excluded_fields;
};

// What a stored job asks for, decoded.
struct BatchPredictionSpec {
  std::string model;             // as sent, @version/@alias included
  std::string instances_format;  // "jsonl" or "csv"
  std::vector<std::string> source_uris;
  std::string output_uri_prefix;  // without a trailing '/'
  InstanceConfig instance_config;
  nlohmann::json model_parameters;  // null = none
  MachineSpec machine;              // machine_type "" = the server's default
  int32_t starting_replicas = 1;
  int32_t max_replicas = 1;
  int32_t batch_size = kDefaultBatchSize;
};

// Decodes a create request body into the job to store (input fields only; defaults not filled
// in). INVALID_ARGUMENT naming the field for malformed JSON, unknown or mistyped fields, a missing
// required field, a URI that is not gs://, an unsupported format or source, replica counts or a
// batch size out of range, and instanceConfig rules (includedFields with excludedFields; field
// lists with csv input, as Vertex).
StatusOr<nlohmann::json> DecodeBatchPredictionJob(std::string_view body);

// The spec of a job DecodeBatchPredictionJob stored.
StatusOr<BatchPredictionSpec> BatchPredictionSpecOf(const nlohmann::json& job);

// instanceConfig from its JSON (path for errors), for the replica's --instance-config flag.
StatusOr<InstanceConfig> DecodeInstanceConfig(const nlohmann::json& j, const std::string& path);
nlohmann::json InstanceConfigToJson(const InstanceConfig& c);

// "prediction-<model display name>-<time>": characters other than letters, digits, '-', '_' and
// '.' in the display name become '_' (it is one path segment).
std::string PredictionDirName(std::string_view model_display_name, TimePoint create_time);

// "prediction.results-00001-of-00004" (shard 1 of 4); errors likewise.
std::string ResultsFileName(int shard, int shards);
std::string ErrorsFileName(int shard, int shards);

}  // namespace trainyard::spec
