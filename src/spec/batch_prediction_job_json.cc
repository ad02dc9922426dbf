#include <cctype>
#include <cstdio>
#include <ctime>

#include "common/bucket_path.h"
#include "protojson/parse.h"
#include "protojson/reader.h"
#include "protojson/writer.h"
#include "spec/batch_prediction_job.h"
#include "spec/custom_job_validation.h"
#include "spec/endpoint.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;
using Fields = protojson::ObjectReader;
using Writer = protojson::ObjectWriter;

constexpr size_t kMaxDisplayName = 128;
constexpr size_t kMaxSourceUris = 1000;

StatusOr<Fields> OpenJob(const json& j) {
  return Fields::Open(j, "",
                      {"displayName", "model", "inputConfig", "outputConfig", "instanceConfig",
                       "modelParameters", "dedicatedResources", "manualBatchTuningParameters",
                       "labels", "serviceAccount", "generateExplanation", "explanationSpec",
                       "encryptionSpec", "unmanagedContainerModel", "disableContainerLogging"},
                      {"name", "state", "error", "outputInfo", "completionStats", "partialFailures",
                       "resourcesConsumed", "modelVersionId", "createTime", "startTime", "endTime",
                       "updateTime", "trainyardInfo", "satisfiesPzs", "satisfiesPzi"},
                      "batchPredictionJob");
}

Status CheckGcsUri(const std::string& uri, const std::string& path, bool wildcard) {
  if (!IsGcsUri(uri)) {
    return protojson::FieldError(path, "'" + uri + "' is not a gs:// URI (gs://BUCKET/OBJECT)");
  }
  std::string checked = uri;
  if (wildcard) {
    for (char& c : checked) {
      if (c == '*') c = 'x';
    }
  }
  if (StatusOr<GcsUri> parsed = ParseGcsUri(checked); !parsed.ok()) {
    return protojson::FieldError(path, parsed.status().message());
  }
  return Status::Ok();
}

Status ReadInput(const Fields& f, Writer& w) {
  TY_RETURN_IF_ERROR(f.Require("inputConfig",
                               "e.g. {\"instancesFormat\": \"jsonl\", "
                               "\"gcsSource\": {\"uris\": [\"gs://b/in.jsonl\"]}}"));
  const std::string path = f.PathOf("inputConfig");
  TY_ASSIGN_OR_RETURN(Fields in, Fields::Open(*f.Get("inputConfig"), path,
                                              {"instancesFormat", "gcsSource", "bigquerySource"}));
  TY_RETURN_IF_ERROR(in.RejectIfSet("bigquerySource", "put the instances in a bucket (gcsSource)"));
  TY_RETURN_IF_ERROR(in.Require("instancesFormat", "\"jsonl\" or \"csv\""));
  TY_RETURN_IF_ERROR(in.Require("gcsSource", "{\"uris\": [\"gs://b/in.jsonl\"]}"));
  std::string format;
  TY_RETURN_IF_ERROR(in.String("instancesFormat", &format));
  if (format != "jsonl" && format != "csv") {
    return protojson::FieldError(in.PathOf("instancesFormat"),
                                 "'" + format + "' is not supported; use \"jsonl\" or \"csv\"");
  }
  TY_ASSIGN_OR_RETURN(Fields src,
                      Fields::Open(*in.Get("gcsSource"), in.PathOf("gcsSource"), {"uris"}));
  std::vector<std::string> uris;
  TY_RETURN_IF_ERROR(src.Strings("uris", &uris));
  if (uris.empty()) return protojson::FieldError(src.PathOf("uris"), "required: one or more");
  if (uris.size() > kMaxSourceUris) {
    return protojson::FieldError(src.PathOf("uris"),
                                 "at most " + std::to_string(kMaxSourceUris) + " URIs");
  }
  for (size_t i = 0; i < uris.size(); ++i) {
    TY_RETURN_IF_ERROR(CheckGcsUri(uris[i], protojson::IndexPath(src.PathOf("uris"), i), true));
  }
  w.Value("inputConfig", {{"instancesFormat", format}, {"gcsSource", {{"uris", uris}}}});
  return Status::Ok();
}

Status ReadOutput(const Fields& f, Writer& w) {
  TY_RETURN_IF_ERROR(f.Require("outputConfig",
                               "e.g. {\"predictionsFormat\": \"jsonl\", "
                               "\"gcsDestination\": {\"outputUriPrefix\": "
                               "\"gs://b/out\"}}"));
  TY_ASSIGN_OR_RETURN(Fields out,
                      Fields::Open(*f.Get("outputConfig"), f.PathOf("outputConfig"),
                                   {"predictionsFormat", "gcsDestination", "bigqueryDestination"}));
  TY_RETURN_IF_ERROR(out.RejectIfSet("bigqueryDestination", "write to a bucket (gcsDestination)"));
  TY_RETURN_IF_ERROR(out.Require("gcsDestination", "{\"outputUriPrefix\": \"gs://b/out\"}"));
  std::string format = "jsonl";
  TY_RETURN_IF_ERROR(out.String("predictionsFormat", &format));
  if (format != "jsonl") {
    return protojson::FieldError(out.PathOf("predictionsFormat"),
                                 "'" + format + "' is not supported; use \"jsonl\"");
  }
  TY_ASSIGN_OR_RETURN(Fields dest, Fields::Open(*out.Get("gcsDestination"),
                                                out.PathOf("gcsDestination"), {"outputUriPrefix"}));
  TY_RETURN_IF_ERROR(dest.Require("outputUriPrefix", "gs://BUCKET/PREFIX"));
  std::string prefix;
  TY_RETURN_IF_ERROR(dest.String("outputUriPrefix", &prefix));
  TY_RETURN_IF_ERROR(CheckGcsUri(prefix, dest.PathOf("outputUriPrefix"), false));
  w.Value("outputConfig",
          {{"predictionsFormat", format}, {"gcsDestination", {{"outputUriPrefix", prefix}}}});
  return Status::Ok();
}

Status ReadResources(const Fields& f, Writer& w) {
  if (const json* d = f.Get("dedicatedResources")) {
    TY_ASSIGN_OR_RETURN(
        Fields r, Fields::Open(*d, f.PathOf("dedicatedResources"),
                               {"machineSpec", "startingReplicaCount", "maxReplicaCount", "spot"}));
    std::optional<MachineSpec> machine;
    TY_RETURN_IF_ERROR(r.Message("machineSpec", &machine, DecodeServingMachineSpec));
    int32_t starting = 1, max = 0;
    bool spot = false;
    TY_RETURN_IF_ERROR(r.Int32("startingReplicaCount", &starting));
    TY_RETURN_IF_ERROR(r.Int32("maxReplicaCount", &max));
    TY_RETURN_IF_ERROR(r.Bool("spot", &spot));
    if (starting < 1 || starting > kMaxBatchPredictionReplicas) {
      return protojson::FieldError(r.PathOf("startingReplicaCount"),
                                   "must be 1 to " + std::to_string(kMaxBatchPredictionReplicas));
    }
    if (max != 0 && (max < starting || max > kMaxBatchPredictionReplicas)) {
      return protojson::FieldError(r.PathOf("maxReplicaCount"),
                                   "must be startingReplicaCount (" + std::to_string(starting) +
                                       ") to " + std::to_string(kMaxBatchPredictionReplicas));
    }
    json out = json::object();
    if (machine) {
      Writer m;
      m.String("machineType", machine->machine_type)
          .String("acceleratorType", machine->accelerator_type)
          .Int32("acceleratorCount", machine->accelerator_count);
      out["machineSpec"] = m.Build();
    }
    out["startingReplicaCount"] = starting;
    out["maxReplicaCount"] = max == 0 ? starting : max;
    w.Value("dedicatedResources", out);
  }
  if (const json* t = f.Get("manualBatchTuningParameters")) {
    TY_ASSIGN_OR_RETURN(Fields b,
                        Fields::Open(*t, f.PathOf("manualBatchTuningParameters"), {"batchSize"}));
    int32_t batch = 0;
    TY_RETURN_IF_ERROR(b.Int32("batchSize", &batch));
    if (batch < 0 || batch > kMaxBatchSize) {
      return protojson::FieldError(b.PathOf("batchSize"),
                                   "must be 1 to " + std::to_string(kMaxBatchSize) +
                                       " (0 or absent: " + std::to_string(kDefaultBatchSize) + ")");
    }
    json tuning = json::object();
    if (batch > 0) tuning["batchSize"] = batch;
    w.Value("manualBatchTuningParameters", tuning);
  }
  return Status::Ok();
}

Status ReadRest(const Fields& f, Writer& w) {
  TY_RETURN_IF_ERROR(f.RejectIfSet("explanationSpec", "remove it (no explanations)"));
  TY_RETURN_IF_ERROR(f.RejectIfSet("encryptionSpec", "remove it (no customer-managed keys)"));
  TY_RETURN_IF_ERROR(f.RejectIfSet("unmanagedContainerModel",
                                   "upload the model (models:upload) and name it in `model`"));
  bool explain = false, no_logs = false;
  TY_RETURN_IF_ERROR(f.Bool("generateExplanation", &explain));
  TY_RETURN_IF_ERROR(f.Bool("disableContainerLogging", &no_logs));
  if (explain) {
    return protojson::FieldError(f.PathOf("generateExplanation"),
                                 "not supported by Trainyard; leave it false");
  }
  std::map<std::string, std::string> labels;
  TY_RETURN_IF_ERROR(f.StringMap("labels", &labels));
  TY_RETURN_IF_ERROR(ValidateLabels(labels, f.PathOf("labels")));
  w.StringMap("labels", labels);
  std::string account;
  TY_RETURN_IF_ERROR(f.String("serviceAccount", &account));
  w.String("serviceAccount", account);
  if (const json* p = f.Get("modelParameters")) w.Value("modelParameters", *p);
  if (const json* c = f.Get("instanceConfig")) {
    TY_ASSIGN_OR_RETURN(InstanceConfig config,
                        DecodeInstanceConfig(*c, f.PathOf("instanceConfig")));
    w.Value("instanceConfig", InstanceConfigToJson(config));
  }
  return Status::Ok();
}

// Vertex's instanceConfig rules that depend on the input format.
Status CheckConfigForFormat(const json& job) {
  const json& in = job["inputConfig"];
  if (in.value("instancesFormat", "") != "csv" || !job.contains("instanceConfig")) {
    return Status::Ok();
  }
  const json& c = job["instanceConfig"];
  if (c.contains("includedFields") || c.contains("excludedFields")) {
    return protojson::FieldError("instanceConfig",
                                 "includedFields and excludedFields need jsonl objects; csv rows "
                                 "are sent as arrays in column order (remove them, or use jsonl)");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<InstanceConfig> DecodeInstanceConfig(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Open(j, path, {"instanceType", "keyField", "includedFields", "excludedFields"}));
  InstanceConfig c;
  TY_RETURN_IF_ERROR(f.String("instanceType", &c.instance_type));
  TY_RETURN_IF_ERROR(f.String("keyField", &c.key_field));
  TY_RETURN_IF_ERROR(f.Strings("includedFields", &c.included_fields));
  TY_RETURN_IF_ERROR(f.Strings("excludedFields", &c.excluded_fields));
  if (!c.instance_type.empty() && c.instance_type != "object" && c.instance_type != "array") {
    return protojson::FieldError(f.PathOf("instanceType"),
                                 "'" + c.instance_type + "' is not \"object\" or \"array\"");
  }
  if (!c.included_fields.empty() && !c.excluded_fields.empty()) {
    return protojson::FieldError(f.PathOf("excludedFields"),
                                 "give includedFields or excludedFields, not both");
  }
  if (c.instance_type == "array" && c.included_fields.empty() && !c.excluded_fields.empty()) {
    return protojson::FieldError(f.PathOf("includedFields"),
                                 "required with instanceType \"array\" and jsonl objects: it "
                                 "gives the order of the array");
  }
  return c;
}

json InstanceConfigToJson(const InstanceConfig& c) {
  Writer w;
  w.String("instanceType", c.instance_type).String("keyField", c.key_field);
  w.Strings("includedFields", c.included_fields).Strings("excludedFields", c.excluded_fields);
  return w.Build();
}

StatusOr<json> DecodeBatchPredictionJob(std::string_view body) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
  TY_ASSIGN_OR_RETURN(Fields f, OpenJob(j));
  TY_RETURN_IF_ERROR(f.Require("displayName", "the job's name in lists"));
  TY_RETURN_IF_ERROR(f.Require("model", "projects/P/locations/L/models/M (or its id)"));
  std::string display_name, model;
  TY_RETURN_IF_ERROR(f.String("displayName", &display_name));
  TY_RETURN_IF_ERROR(f.String("model", &model));
  if (display_name.empty() || Utf8Length(display_name) > kMaxDisplayName) {
    return protojson::FieldError(
        f.PathOf("displayName"),
        "required, at most " + std::to_string(kMaxDisplayName) + " characters");
  }
  if (model.empty()) return protojson::FieldError(f.PathOf("model"), "required");
  Writer w;
  w.String("displayName", display_name).String("model", model);
  TY_RETURN_IF_ERROR(ReadInput(f, w));
  TY_RETURN_IF_ERROR(ReadOutput(f, w));
  TY_RETURN_IF_ERROR(ReadResources(f, w));
  TY_RETURN_IF_ERROR(ReadRest(f, w));
  json job = w.Build();
  TY_RETURN_IF_ERROR(CheckConfigForFormat(job));
  return job;
}

StatusOr<BatchPredictionSpec> BatchPredictionSpecOf(const json& job) {
  // The stored job went through DecodeBatchPredictionJob: decoding it again cannot fail on a
  // field, and keeps one reader of the JSON.
  TY_ASSIGN_OR_RETURN(json clean, DecodeBatchPredictionJob(job.dump()));
  BatchPredictionSpec s;
  s.model = clean.value("model", "");
  s.instances_format = clean["inputConfig"].value("instancesFormat", "");
  s.source_uris = clean["inputConfig"]["gcsSource"]["uris"].get<std::vector<std::string>>();
  s.output_uri_prefix = clean["outputConfig"]["gcsDestination"].value("outputUriPrefix", "");
  while (s.output_uri_prefix.ends_with('/')) s.output_uri_prefix.pop_back();
  if (clean.contains("instanceConfig")) {
    TY_ASSIGN_OR_RETURN(s.instance_config,
                        DecodeInstanceConfig(clean["instanceConfig"], "instanceConfig"));
  }
  if (clean.contains("modelParameters")) s.model_parameters = clean["modelParameters"];
  if (clean.contains("dedicatedResources")) {
    const json& d = clean["dedicatedResources"];
    if (d.contains("machineSpec")) {
      TY_ASSIGN_OR_RETURN(s.machine, DecodeServingMachineSpec(d["machineSpec"], "machineSpec"));
    }
    s.starting_replicas = d.value("startingReplicaCount", 1);
    s.max_replicas = d.value("maxReplicaCount", s.starting_replicas);
  }
  if (clean.contains("manualBatchTuningParameters")) {
    s.batch_size = clean["manualBatchTuningParameters"].value("batchSize", kDefaultBatchSize);
  }
  return s;
}

std::string PredictionDirName(std::string_view model_display_name, TimePoint create_time) {
  std::string name;
  for (char c : model_display_name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                      c == '.' || (static_cast<unsigned char>(c) & 0x80);
    name += keep ? c : '_';
  }
  if (name.empty()) name = "model";
  // 2026-11-29T01:30:00.000Z -> 2026_11_29T01_30_00_000Z
  const std::time_t secs = std::chrono::system_clock::to_time_t(create_time);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(create_time.time_since_epoch())
          .count() %
      1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[40];
  std::snprintf(stamp, sizeof stamp, "%04d_%02d_%02dT%02d_%02d_%02d_%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms < 0 ? ms + 1000 : ms));
  return "prediction-" + name + "-" + stamp;
}

namespace {
std::string ShardName(std::string_view prefix, int shard, int shards) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%05d-of-%05d", shard, shards);
  return std::string(prefix) + buf;
}
}  // namespace

std::string ResultsFileName(int shard, int shards) {
  return ShardName(kResultsFilePrefix, shard, shards);
}
std::string ErrorsFileName(int shard, int shards) {
  return ShardName(kErrorsFilePrefix, shard, shards);
}

}  // namespace trainyard::spec
